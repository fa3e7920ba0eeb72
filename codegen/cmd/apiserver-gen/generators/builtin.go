package generators

import (
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"

	"k8s.io/code-generator/pkg/apidefinitions"
	"k8s.io/gengo/v2/types"
	openapiutil "k8s.io/kube-openapi/pkg/util"
	"sigs.k8s.io/yaml"
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
	// Default is the function with the kind's defaults,
	// "<import path>.<Func>", of type func(obj *T); empty for none.
	Default string `json:"default"`
	// Prepare is the function setting the fields the server owns on
	// create and update, of type func(obj, old *T); empty for none.
	Prepare string `json:"prepare"`
	// Finalize is the variable holding the kind's finalize lifecycle, of
	// type *resource.Finalize[*T]; empty for none.
	Finalize string `json:"finalize"`
}

// hooks are the kind's hook references by their key in the file.
func (k *builtinKind) hooks() map[string]string {
	return map[string]string{"validate": k.Validate, "default": k.Default, "prepare": k.Prepare, "finalize": k.Finalize}
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
			for key, ref := range k.hooks() {
				if _, _, ok := splitRef(ref); ref != "" && !ok {
					return nil, fmt.Errorf("%s: %s.%s: %s %q is not <import path>.<Name>", name, p.Package, k.Kind, key, ref)
				}
			}
		}
	}
	return f, nil
}

// splitRef splits "<import path>.<Name>" into its package and name.
func splitRef(ref string) (pkg, name string, ok bool) {
	i := strings.LastIndex(ref, ".")
	if i <= 0 || strings.LastIndex(ref, "/") > i {
		return "", "", false
	}
	return ref[:i], ref[i+1:], true
}

// packages are the Go packages the file needs loaded: the API packages
// and those of the validation functions.
func (f builtinFile) packages() []string {
	var out []string
	for _, p := range f {
		out = append(out, p.Package)
		for _, k := range p.Kinds {
			for _, ref := range k.hooks() {
				if pkg, _, ok := splitRef(ref); ok {
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
	for _, h := range []struct {
		key, ref string
		out      **types.Type
		variable bool
	}{
		{"validate", bk.Validate, &r.Validate, false},
		{"default", bk.Default, &r.Default, false},
		{"prepare", bk.Prepare, &r.Prepare, false},
		{"finalize", bk.Finalize, &r.Finalize, true},
	} {
		if h.ref == "" {
			continue
		}
		pkg, name, _ := splitRef(h.ref)
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
	return r, nil
}
