package generators

import (
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"k8s.io/code-generator/pkg/apidefinitions"
	"k8s.io/gengo/v2/types"
	openapiutil "k8s.io/kube-openapi/pkg/util"
	"sigs.k8s.io/yaml"

	"github.com/apiloom/apiloom/server/resource"
)

// builtinFile is the generator's description of the built-in kinds
// (builtin/apis.yaml): kinds whose Go types live in packages the project
// does not own (k8s.io/api), so their facts cannot be written as markers
// above them. Each kind's markers are given here as the lines that would
// be written there, and are read by the same code as an apis/ type's.
type builtinFile []builtinPackage

// builtinPackage is one upstream API package and the kinds served from it.
type builtinPackage struct {
	// Package is the Go import path, e.g. "k8s.io/api/core/v1". Its doc.go
	// +groupName (which may be empty: the core group) is the group.
	Package string        `json:"package"`
	Kinds   []builtinKind `json:"kinds"`
}

// builtinKind is one kind served from a builtinPackage.
type builtinKind struct {
	// Kind is the type's name in the package; it must be +genclient.
	Kind string `json:"kind"`
	// Markers are kubebuilder markers, one per line, as written above a
	// type in apis/ ("+kubebuilder:resource:shortName=cm").
	Markers []string `json:"markers"`
	// Validate is the function with the kind's validation rules,
	// "<import path>.<Func>", of type func(obj, old *T) field.ErrorList;
	// empty for none.
	Validate string `json:"validate"`
	// Fields are selectable fields whose value is not one field of the
	// object (core/v1 Event's "source"), each computed by a function.
	Fields []builtinField `json:"fields"`
	// Storage, for a kind served over the storage of a kind in another
	// package (events.k8s.io/v1 Event over core/v1 Event), names it and
	// the conversions.
	Storage *builtinStorage `json:"storage"`
	// TTL, when set, is how long objects live after their last write
	// (a Go duration, "1h"; resource.Info.TTL).
	TTL string `json:"ttl"`
	// Printer, when set, is the kind's own Table, "<import path>.<Var>",
	// a *resource.Printer[*T] (resource.Definition.Printer).
	Printer string `json:"printer"`
	// Default is the function with the kind's defaults,
	// "<import path>.<Func>", of type func(obj *T); empty for none.
	Default string `json:"default"`
	// Prepare is the function setting the fields the server owns on
	// create and update, of type func(obj, old *T); empty for none.
	Prepare string `json:"prepare"`
	// Finalize is the variable holding the kind's finalize lifecycle, of
	// type *resource.Finalize[*T]; empty for none.
	Finalize string `json:"finalize"`
	// ValidateName is the function with the kind's rule for object
	// names, of type func(name string, prefix bool) []string, in place
	// of the DNS-subdomain rule; empty for that one.
	ValidateName string `json:"validateName"`
	// ValidateStatus is the function with the rules of a write to the
	// kind's status subresource, of type func(obj, old *T)
	// field.ErrorList (kube-apiserver's status strategy ValidateUpdate);
	// empty for none.
	ValidateStatus string `json:"validateStatus"`
	// Strategy are the kind's facts from kube-apiserver's registry
	// strategy (resource.Strategy); left out, a custom resource's.
	Strategy builtinStrategy `json:"strategy"`
}

// builtinStrategy is resource.Strategy as the file states it.
type builtinStrategy struct {
	UnconditionalUpdate   bool `json:"unconditionalUpdate"`
	UntrackedGeneration   bool `json:"untrackedGeneration"`
	StatusUpdatesMetadata bool `json:"statusUpdatesMetadata"`
	DeleteAnswersStatus   bool `json:"deleteAnswersStatus"`
}

// builtinField is a selectable field computed by a function.
type builtinField struct {
	// Key is the field-selector key ("source").
	Key string `json:"key"`
	// Func is "<import path>.<Func>", of type func(*T) string.
	Func string `json:"func"`
}

// builtinStorage says where a kind's objects are stored: as the kind of
// the same name in Package, which this file must also serve.
type builtinStorage struct {
	Package string `json:"package"`
	// ToStorage and FromStorage are "<import path>.<Func>" conversions
	// with conversion-gen's signature, func(in *A, out *B, s
	// conversion.Scope) error.
	ToStorage   string `json:"toStorage"`
	FromStorage string `json:"fromStorage"`
	// FieldLabels maps the kind's field-selector keys to the stored
	// kind's where they differ (resource.Conversion.FieldLabels).
	FieldLabels map[string]string `json:"fieldLabels"`
}

// readBuiltins reads the file at name; an empty name is no built-ins.
func readBuiltins(name string) (builtinFile, error) {
	if name == "" {
		return nil, nil
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var f builtinFile
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for _, p := range f {
		if p.Package == "" || len(p.Kinds) == 0 {
			return nil, fmt.Errorf("%s: every entry needs a package and kinds", name)
		}
		for _, k := range p.Kinds {
			for _, fn := range k.funcs() {
				if _, _, ok := splitFunc(fn); !ok {
					return nil, fmt.Errorf("%s: %s.%s: %q is not <import path>.<Func>", name, p.Package, k.Kind, fn)
				}
			}
			if k.TTL != "" {
				if d, err := time.ParseDuration(k.TTL); err != nil || d <= 0 {
					return nil, fmt.Errorf("%s: %s.%s: ttl %q is not a positive duration", name, p.Package, k.Kind, k.TTL)
				}
			}
		}
	}
	return f, nil
}

// validateFunc splits Validate into its package and function name.
func (k *builtinKind) validateFunc() (pkg, name string, ok bool) { return splitFunc(k.Validate) }

// funcs are the "<import path>.<Name>" functions and variables the kind
// names.
func (k *builtinKind) funcs() []string {
	var out []string
	if k.Validate != "" {
		out = append(out, k.Validate)
	}
	for _, f := range k.Fields {
		out = append(out, f.Func)
	}
	if st := k.Storage; st != nil {
		out = append(out, st.ToStorage, st.FromStorage)
	}
	if k.Printer != "" {
		out = append(out, k.Printer)
	}
	for _, ref := range []string{k.Default, k.Prepare, k.Finalize, k.ValidateName, k.ValidateStatus} {
		if ref != "" {
			out = append(out, ref)
		}
	}
	return out
}

// splitFunc splits "<import path>.<Func>" into its package and name.
func splitFunc(fn string) (pkg, name string, ok bool) {
	i := strings.LastIndex(fn, ".")
	if i <= 0 || strings.LastIndex(fn, "/") > i {
		return "", "", false
	}
	return fn[:i], fn[i+1:], true
}

// function is the function fn names in u, or an error.
func function(u types.Universe, fn string) (*types.Type, error) {
	pkg, name, _ := splitFunc(fn)
	t := u.Function(types.Name{Package: pkg, Name: name})
	if t.Kind != types.DeclarationOf || t.Underlying == nil || t.Underlying.Signature == nil {
		return nil, fmt.Errorf("%s: no such function", fn)
	}
	return t, nil
}

// packages are the Go packages the file needs loaded: the API packages
// and those of the validation functions.
func (f builtinFile) packages() []string {
	var out []string
	for _, p := range f {
		out = append(out, p.Package)
		for _, k := range p.Kinds {
			for _, fn := range k.funcs() {
				if pkg, _, ok := splitFunc(fn); ok {
					out = append(out, pkg)
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// isAPIPackage reports whether pkg is one of the file's API packages,
// which are not read as apis/ packages (only the kinds named are served).
func (f builtinFile) isAPIPackage(pkg string) bool {
	return slices.ContainsFunc(f, func(p builtinPackage) bool { return p.Package == pkg })
}

// builtins turns the file into group-versions, reading each named type as
// an apis/ type is read, its markers being its upstream comments (for
// +genclient) followed by the file's.
func (a *analyzer) builtins(u types.Universe, f builtinFile) ([]*groupVersion, error) {
	var (
		gvs  []*groupVersion
		errs []error
	)
	for _, bp := range f {
		p := u.Package(bp.Package)
		if p == nil || len(p.Types) == 0 {
			errs = append(errs, fmt.Errorf("built-in package %s: not loaded or has no types", bp.Package))
			continue
		}
		group, ok, err := apidefinitions.GroupNameForPackage(p.Comments)
		if err != nil || !ok {
			errs = append(errs, fmt.Errorf("built-in package %s: no +groupName (%v)", bp.Package, err))
			continue
		}
		gv := &groupVersion{Pkg: p, Group: group, GroupDir: path.Base(path.Dir(p.Path)), Version: path.Base(p.Path)}
		for _, bk := range bp.Kinds {
			r, err := a.builtinResource(u, p, bk)
			if err != nil {
				errs = append(errs, fmt.Errorf("built-in %s.%s: %w", bp.Package, bk.Kind, err))
				continue
			}
			gv.Resources = append(gv.Resources, r)
		}
		slices.SortFunc(gv.Resources, func(x, y *resourceModel) int { return strings.Compare(x.Kind, y.Kind) })
		if err := checkIdentifiers(gv); err != nil {
			errs = append(errs, err)
		}
		gvs = append(gvs, gv)
	}
	if len(errs) == 0 {
		errs = append(errs, linkBuiltinStorage(u, f, gvs))
	}
	return gvs, errors.Join(errs...)
}

// builtinResource reads one kind of the file.
func (a *analyzer) builtinResource(u types.Universe, p *types.Package, bk builtinKind) (*resourceModel, error) {
	t := p.Types[bk.Kind]
	if t == nil {
		return nil, errors.New("no such type")
	}
	lines := commentLines(t)
	if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), "+genclient") }) {
		return nil, errors.New("the type has no +genclient: client-go has no client for it")
	}
	for _, m := range bk.Markers {
		lines = append(lines, " "+strings.TrimSpace(m))
	}
	r, err := a.resourceFrom(p, t, lines)
	if err != nil {
		return nil, err
	}
	r.BuiltIn = true
	if _, ok := t.Methods["OpenAPIModelName"]; ok {
		// openapi-gen keys a type with a model name by it: k8s.io/api's
		// types name themselves "io.k8s.api.core.v1.ConfigMap".
		r.OpenAPIName = openapiutil.ToRESTFriendlyName(r.OpenAPIName)
	}
	if bk.Validate != "" {
		if r.Validate, err = function(u, bk.Validate); err != nil {
			return nil, fmt.Errorf("validate %w", err)
		}
	}
	for _, f := range bk.Fields {
		if slices.ContainsFunc(r.SelectableFields, func(g *fieldGetter) bool { return g.Key == f.Key }) {
			return nil, fmt.Errorf("fields: %s is selectable twice", f.Key)
		}
		fn, err := function(u, f.Func)
		if err != nil {
			return nil, fmt.Errorf("fields: %s: %w", f.Key, err)
		}
		r.SelectableFields = append(r.SelectableFields, &fieldGetter{Key: f.Key, Func: fn})
	}
	if bk.Printer != "" {
		pkg, name, _ := splitFunc(bk.Printer)
		v := u.Variable(types.Name{Package: pkg, Name: name})
		if v.Kind != types.DeclarationOf || v.Underlying == nil {
			return nil, fmt.Errorf("printer %s: no such variable", bk.Printer)
		}
		r.Printer = v
	}
	if bk.TTL != "" {
		r.TTL, _ = time.ParseDuration(bk.TTL) // checked by readBuiltins
	}
	for _, h := range []struct {
		key, ref string
		out      **types.Type
		variable bool
	}{
		{"default", bk.Default, &r.Default, false},
		{"prepare", bk.Prepare, &r.Prepare, false},
		{"finalize", bk.Finalize, &r.Finalize, true},
		{"validateName", bk.ValidateName, &r.ValidateName, false},
		{"validateStatus", bk.ValidateStatus, &r.ValidateStatus, false},
	} {
		if h.ref == "" {
			continue
		}
		pkg, name, _ := splitFunc(h.ref)
		n := types.Name{Package: pkg, Name: name}
		if h.variable {
			v := u.Variable(n)
			if v.Kind != types.DeclarationOf || v.Underlying == nil {
				return nil, fmt.Errorf("%s %s: no such variable", h.key, h.ref)
			}
			*h.out = v
			continue
		}
		fn := u.Function(n)
		if fn.Kind != types.DeclarationOf || fn.Underlying == nil || fn.Underlying.Signature == nil {
			return nil, fmt.Errorf("%s %s: no such function", h.key, h.ref)
		}
		*h.out = fn
	}
	r.HasFinalize = r.Finalize != nil
	r.Strategy = resource.Strategy(bk.Strategy)
	if r.Strategy.StatusUpdatesMetadata && !r.HasStatus {
		return nil, errors.New("strategy: statusUpdatesMetadata without a status subresource")
	}
	if r.ValidateStatus != nil && !r.HasStatus {
		return nil, errors.New("validateStatus without a status subresource")
	}
	return r, nil
}
