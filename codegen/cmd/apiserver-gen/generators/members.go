package generators

import (
	"fmt"

	"k8s.io/gengo/v2/types"
)

// statusCopy is how CopyStatus copies src's status into dst.
type statusCopy int

const (
	// copyNone: no status subresource; CopyStatus does nothing.
	copyNone statusCopy = iota
	// copyDeepInto: src.Status.DeepCopyInto(&dst.Status).
	copyDeepInto
	// copyDeepPointer: dst.Status = src.Status.DeepCopy() (a pointer status).
	copyDeepPointer
	// copyAssign: dst.Status = src.Status, for a status holding no
	// pointers, slices or maps, which deepcopy-gen gives no methods.
	copyAssign
)

// copyStatusFor picks how to copy a status member of type t. The copy
// must be deep: the server stores dst and the caller may keep using src.
func copyStatusFor(t *types.Type) (statusCopy, error) {
	if t.Kind == types.Pointer {
		if _, ok := t.Elem.Methods["DeepCopy"]; ok {
			return copyDeepPointer, nil
		}
		return copyNone, fmt.Errorf("%s has no DeepCopy method; run deepcopy-gen on its package", t.Elem.Name)
	}
	if _, ok := t.Methods["DeepCopyInto"]; ok {
		return copyDeepInto, nil
	}
	if shallow(t, map[*types.Type]bool{}) {
		return copyAssign, nil
	}
	return copyNone, fmt.Errorf("%s has no DeepCopyInto method and holds references; run deepcopy-gen on its package", t.Name)
}

// shallow reports whether assigning a value of t copies it completely.
func shallow(t *types.Type, seen map[*types.Type]bool) bool {
	if seen[t] {
		return true
	}
	seen[t] = true
	switch t.Kind {
	case types.Builtin:
		return true
	case types.Alias:
		return shallow(t.Underlying, seen)
	case types.Array:
		return shallow(t.Elem, seen)
	case types.Struct:
		for _, m := range t.Members {
			if !shallow(m.Type, seen) {
				return false
			}
		}
		return true
	default:
		return false
	}
}

// specMembers lists the members SpecEqual compares: everything a client
// writes through the main resource except metadata. The status is left out
// when it has its own subresource; without one it is ordinary content (as
// for CustomResourceDefinitions), so changing it bumps metadata.generation.
// Unexported and json:"-" members are never stored, so never compared.
func specMembers(t *types.Type, hasStatus bool) []string {
	var out []string
	for _, m := range t.Members {
		switch {
		case m.Embedded && m.Type.Name.Package == metav1Pkg && (m.Type.Name.Name == "TypeMeta" || m.Type.Name.Name == "ObjectMeta"):
		case hasStatus && m.Name == "Status":
		case !isExported(m.Name):
		default:
			if _, skip := jsonName(m); !skip {
				out = append(out, m.Name)
			}
		}
	}
	return out
}

// fieldsFuncName is the name of r's Fields function when it is not inline.
func fieldsFuncName(r *resourceModel) string { return lowerFirst(r.Kind) + "Fields" }
