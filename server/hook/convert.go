package hook

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Converted returns the hooks of a version O of a kind whose hooks h are
// written for its storage version S: each call converts its objects to S
// (newS making the empty ones) with toS, runs h's hook, and converts a
// mutated object back with fromS. So a kind's rules hold whichever
// version a client writes through. A conversion error is a 500 (the
// panic Call turns into one). nil when h is.
func Converted[O, S Object](h *Hooks[S], newS func() S, toS func(O, S) error, fromS func(S, O) error) *Hooks[O] {
	if h == nil {
		return nil
	}
	to := func(o O) S {
		var zero O
		if any(o) == any(zero) {
			var zs S
			return zs // no old object
		}
		s := newS()
		if err := toS(o, s); err != nil {
			panic(fmt.Sprintf("converting to the storage version: %v", err))
		}
		return s
	}
	back := func(s S, o O) {
		if err := fromS(s, o); err != nil {
			panic(fmt.Sprintf("converting from the storage version: %v", err))
		}
	}
	mutate1 := func(f func(*Request, S)) func(*Request, O) {
		if f == nil {
			return nil
		}
		return func(req *Request, obj O) {
			s := to(obj)
			f(req, s)
			back(s, obj)
		}
	}
	mutate2 := func(f func(*Request, S, S)) func(*Request, O, O) {
		if f == nil {
			return nil
		}
		return func(req *Request, obj, old O) {
			s := to(obj)
			f(req, s, to(old))
			back(s, obj)
		}
	}
	validate1 := func(f func(*Request, S) (Warnings, field.ErrorList)) func(*Request, O) (Warnings, field.ErrorList) {
		if f == nil {
			return nil
		}
		return func(req *Request, obj O) (Warnings, field.ErrorList) { return f(req, to(obj)) }
	}
	validate2 := func(f func(*Request, S, S) (Warnings, field.ErrorList)) func(*Request, O, O) (Warnings, field.ErrorList) {
		if f == nil {
			return nil
		}
		return func(req *Request, obj, old O) (Warnings, field.ErrorList) { return f(req, to(obj), to(old)) }
	}
	return &Hooks[O]{
		Default:                mutate1(h.Default),
		PrepareForCreate:       mutate1(h.PrepareForCreate),
		PrepareForUpdate:       mutate2(h.PrepareForUpdate),
		PrepareForStatusUpdate: mutate2(h.PrepareForStatusUpdate),
		ValidateCreate:         validate1(h.ValidateCreate),
		ValidateUpdate:         validate2(h.ValidateUpdate),
		ValidateStatusUpdate:   validate2(h.ValidateStatusUpdate),
		ValidateDelete:         validate1(h.ValidateDelete),
	}
}
