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
			if _, _, ok := k.validateFunc(); k.Validate != "" && !ok {
				return nil, fmt.Errorf("%s: %s.%s: validate %q is not <import path>.<Func>", name, p.Package, k.Kind, k.Validate)
			}
		}
	}
	return f, nil
}

// validateFunc splits Validate into its package and function name.
func (k *builtinKind) validateFunc() (pkg, name string, ok bool) {
	i := strings.LastIndex(k.Validate, ".")
	if i <= 0 || strings.LastIndex(k.Validate, "/") > i {
		return "", "", false
	}
	return k.Validate[:i], k.Validate[i+1:], true
}

// packages are the Go packages the file needs loaded: the API packages
// and those of the validation functions.
func (f builtinFile) packages() []string {
	var out []string
	for _, p := range f {
		out = append(out, p.Package)
		for _, k := range p.Kinds {
			if pkg, _, ok := k.validateFunc(); ok {
				out = append(out, pkg)
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
	if bk.Validate != "" {
		pkg, name, _ := bk.validateFunc()
		fn := u.Function(types.Name{Package: pkg, Name: name})
		if fn.Kind != types.DeclarationOf || fn.Underlying == nil || fn.Underlying.Signature == nil {
			return nil, fmt.Errorf("validate %s: no such function", bk.Validate)
		}
		r.Validate = fn
	}
	return r, nil
}
