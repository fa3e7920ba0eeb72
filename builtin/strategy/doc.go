// Package strategy holds what kube-apiserver does to the built-in kinds
// beyond validation (package validation): their defaults (its SetDefaults_
// functions and the conversions it decodes through) and the fields its
// registry strategies own (PrepareForCreate, PrepareForUpdate), plus a
// Namespace's finalize lifecycle. builtin/apis.yaml names each function as
// a kind's `default`, `prepare` or `finalize`, and apiserver-gen makes it
// the kind's resource.Definition.Default, Prepare or Finalize.
package strategy
