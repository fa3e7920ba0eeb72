package registry

import (
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// reachableDefinitions returns defs restricted to the definitions of roots
// and of everything they depend on, transitively (OpenAPIDefinition's
// Dependencies, which openapi-gen lists for every $ref and which
// kube-openapi's builders walk to render the documents). Roots defs lacks
// are left out, for the caller to report.
//
// What a server retains from its definitions must be this closure only:
// openapi-gen defines every type of every package it was given (all of
// core/v1, Pod and PersistentVolume included), most of which no served kind
// refers to, and a holder of the whole map keeps megabytes of schemas live
// for the life of the process. The closure is computed once, here; each
// call of the returned function still builds defs' whole map (the ref
// callback differs between callers) and copies the closure out of it, so
// the rest is garbage as soon as the call returns.
func reachableDefinitions(defs common.GetOpenAPIDefinitions, roots []string) common.GetOpenAPIDefinitions {
	if defs == nil {
		return nil
	}
	keep := closure(defs(func(string) spec.Ref { return spec.Ref{} }), roots)
	return func(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
		all := defs(ref)
		out := make(map[string]common.OpenAPIDefinition, len(keep))
		for key := range keep {
			if d, ok := all[key]; ok {
				out[key] = d
			}
		}
		return out
	}
}

// closure is the set of roots in all and of the keys they depend on.
func closure(all map[string]common.OpenAPIDefinition, roots []string) map[string]struct{} {
	keep := map[string]struct{}{}
	pending := append([]string(nil), roots...)
	for len(pending) > 0 {
		key := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		if _, seen := keep[key]; seen {
			continue
		}
		d, ok := all[key]
		if !ok {
			continue
		}
		keep[key] = struct{}{}
		pending = append(pending, d.Dependencies...)
	}
	return keep
}
