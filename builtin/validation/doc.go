// Package validation holds the upstream validation rules of the built-in
// kinds apiloom serves from k8s.io/api (builtin/apis.yaml names one
// function per kind). These kinds have no schema: kube-apiserver checks
// them in Go code, so these functions state the same rules, with the same
// field paths and messages, built on k8s.io/apimachinery's validation
// helpers (IsConfigMapKey, IsDNS1123Label, field.ErrorList). The generated
// resource.Definition sets them as Validate, which every write path calls
// through the admission pipeline after the metadata rules.
//
// Each function is func(obj, old *T) field.ErrorList: old is nil on create.
// The metadata rules common to every kind (names, labels, annotations,
// immutable metadata on update) are checked by the server itself and are
// not repeated here.
package validation
