package generators

import (
	"errors"
	"fmt"
	"go/token"
	gotypes "go/types"
	"path"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"
)

// A kind's hooks (package server/hook) are the methods of the type named
// after the kind in the hooks package of its group-version,
// <hooks base>/<group dir>/<version>: a method is wired into the kind's
// Definition.Hooks when its name is one of hookSignatures' and its
// signature the one given there; a kind's custom subresources are served
// by methods of the same type named by their markers (custom.go).
// Anything that looks like a hook and is not one is an error naming its
// file and line, so a misspelt or mistyped hook fails generation rather
// than being silently ignored: an exported
// method of a kind's hooks type that is not a hook, a hook method with
// another signature, a type with hook methods named after no kind of the
// group-version, and a hooks package of no group-version.

// hookPkg is the import path of the hooks API.
const hookPkg = "github.com/apiloom/apiloom/server/hook"

// fieldPkg is apimachinery's validation errors.
const fieldPkg = "k8s.io/apimachinery/pkg/util/validation/field"

// hookSignatures are the hook methods, in Definition.Hooks' field order,
// with their parameters (after the *hook.Request) as a count of objects,
// and whether they return (hook.Warnings, field.ErrorList).
var hookSignatures = []struct {
	name     string
	objects  int
	validate bool
}{
	{"Default", 1, false},
	{"PrepareForCreate", 1, false},
	{"PrepareForUpdate", 2, false},
	{"PrepareForStatusUpdate", 2, false},
	{"ValidateCreate", 1, true},
	{"ValidateUpdate", 2, true},
	{"ValidateStatusUpdate", 2, true},
	{"ValidateDelete", 1, true},
}

// hooksModel is a kind's hooks type and the hooks it has.
type hooksModel struct {
	// Pkg is the hooks package, Type the type's name (the kind's).
	Pkg, Type string
	// Methods are the hook names it has, in hookSignatures' order.
	Methods []string
	// Custom is true when it serves custom subresources (custom.go).
	Custom bool
}

// findHooks loads the hooks packages under base (an import path; its
// directory need not exist) and attaches each kind's hooks to its model.
func findHooks(base string, gvs []*groupVersion) error {
	if base != "" {
		pkgs, err := loadHooks(base + "/...")
		if err != nil {
			return err
		}
		if err := checkHooks(pkgs, base, gvs); err != nil {
			return errors.Join(err, unimplementedCustom(base, gvs))
		}
	}
	return unimplementedCustom(base, gvs)
}

// loadHooks loads the packages patterns name, with their types and syntax.
func loadHooks(patterns ...string) ([]*packages.Package, error) {
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes | packages.NeedSyntax | packages.NeedTypesInfo | packages.NeedFiles}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, fmt.Errorf("loading the hooks packages %s: %w", strings.Join(patterns, " "), err)
	}
	return pkgs, nil
}

// checkHooks checks pkgs, the hooks packages under base, and attaches
// each kind's hooks to its model.
func checkHooks(pkgs []*packages.Package, base string, gvs []*groupVersion) error {
	var errs []error
	for _, p := range pkgs {
		for _, e := range p.Errors {
			errs = append(errs, fmt.Errorf("hooks package %s: %s", p.PkgPath, e))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	for _, p := range pkgs {
		if p.Types == nil || len(p.GoFiles) == 0 {
			continue
		}
		rel := strings.TrimPrefix(p.PkgPath, base+"/")
		i := slices.IndexFunc(gvs, func(gv *groupVersion) bool { return path.Join(gv.GroupDir, gv.Version) == rel })
		if i < 0 {
			errs = append(errs, fmt.Errorf("%s: hooks package %s is of no API group-version (expected %s/<group>/<version> of one under apis/ or a built-in one)", position(p.Fset, p.Syntax[0].Package), p.PkgPath, base))
			continue
		}
		errs = append(errs, hooksOf(p, gvs[i])...)
	}
	return errors.Join(errs...)
}

// hooksOf checks the types of p, the hooks package of gv, and sets the
// hooks of gv's kinds.
func hooksOf(p *packages.Package, gv *groupVersion) []error {
	var errs []error
	scope := p.Types.Scope()
	for _, name := range scope.Names() {
		tn, ok := scope.Lookup(name).(*gotypes.TypeName)
		if !ok || !tn.Exported() {
			continue
		}
		named, ok := tn.Type().(*gotypes.Named)
		if !ok {
			continue
		}
		var r *resourceModel
		for _, rm := range gv.Resources {
			if rm.Kind == name {
				r = rm
			}
		}
		ms := gotypes.NewMethodSet(gotypes.NewPointer(named))
		if r == nil {
			// Not a kind: an error only when it has hook methods, a
			// misnamed hooks type.
			for i := range ms.Len() {
				if isHookName(ms.At(i).Obj().Name()) {
					errs = append(errs, fmt.Errorf("%s: type %s has hook method %s but %s/%s has no kind %s", position(p.Fset, tn.Pos()), name, ms.At(i).Obj().Name(), gv.Group, gv.Version, name))
					break
				}
			}
			continue
		}
		m := &hooksModel{Pkg: p.PkgPath, Type: name}
		kind := gv.Pkg.Path + "." + r.Kind
		for i := range ms.Len() {
			fn := ms.At(i).Obj().(*gotypes.Func)
			if !fn.Exported() {
				continue
			}
			sig := fn.Type().(*gotypes.Signature)
			if c := customNamed(r, fn.Name()); c != nil {
				if got, want := signatureString(sig), c.signature(kind); got != want {
					errs = append(errs, fmt.Errorf("%s: subresource method %s.%s has signature %s, want %s", position(p.Fset, fn.Pos()), name, fn.Name(), got, want))
					continue
				}
				c.Implemented = true
				m.Custom = true
				continue
			}
			want, ok := expectedSignature(fn.Name(), kind)
			if !ok {
				errs = append(errs, fmt.Errorf("%s: %s.%s is not a hook: the hooks of %s are %s%s", position(p.Fset, fn.Pos()), name, fn.Name(), r.Kind, hookNames(), customNames(r)))
				continue
			}
			if got := signatureString(sig); got != want {
				errs = append(errs, fmt.Errorf("%s: hook %s.%s has signature %s, want %s", position(p.Fset, fn.Pos()), name, fn.Name(), got, want))
				continue
			}
			m.Methods = append(m.Methods, fn.Name())
		}
		slices.SortFunc(m.Methods, func(a, b string) int { return hookIndex(a) - hookIndex(b) })
		if len(m.Methods) > 0 || m.Custom {
			r.Hooks = m
		}
	}
	return errs
}

func isHookName(name string) bool { return hookIndex(name) >= 0 }

func hookIndex(name string) int {
	return slices.IndexFunc(hookSignatures, func(s struct {
		name     string
		objects  int
		validate bool
	}) bool {
		return s.name == name
	})
}

// hookNames lists the hook names for messages.
func hookNames() string {
	var names []string
	for _, s := range hookSignatures {
		names = append(names, s.name)
	}
	return strings.Join(names, ", ")
}

// expectedSignature is the signature hook name must have for kind (the
// qualified type name), as signatureString writes it.
func expectedSignature(name, kind string) (string, bool) {
	i := hookIndex(name)
	if i < 0 {
		return "", false
	}
	s := hookSignatures[i]
	params := []string{"*" + hookPkg + ".Request"}
	for range s.objects {
		params = append(params, "*"+kind)
	}
	out := "func(" + strings.Join(params, ", ") + ")"
	if s.validate {
		out += " (" + hookPkg + ".Warnings, " + fieldPkg + ".ErrorList)"
	}
	return out, true
}

// signatureString writes sig with its parameter and result types only,
// fully qualified.
func signatureString(sig *gotypes.Signature) string {
	tuple := func(t *gotypes.Tuple) []string {
		var out []string
		for i := range t.Len() {
			out = append(out, gotypes.TypeString(t.At(i).Type(), nil))
		}
		return out
	}
	s := "func(" + strings.Join(tuple(sig.Params()), ", ") + ")"
	if sig.Variadic() {
		s += " (variadic)"
	}
	switch res := tuple(sig.Results()); len(res) {
	case 0:
	case 1:
		s += " " + res[0]
	default:
		s += " (" + strings.Join(res, ", ") + ")"
	}
	return s
}

// position is pos as file:line.
func position(fset *token.FileSet, pos token.Pos) string {
	p := fset.Position(pos)
	return fmt.Sprintf("%s:%d", p.Filename, p.Line)
}
