// Package generators is apiserver-gen's gengo generator. For each API
// package (apis/<group>/<version>) with +genclient types it writes
// <output>/<group>/<version>/zz_generated.resources.go: one exported
// resource.Definition per type stating its facts (group, version, kind,
// plural, scope, short names, status subresource, selectable fields,
// printer columns, custom subresources) and the small per-type functions
// the generic server calls, plus an Install function registering them.
// A kind with a stream subresource also gets the client method client-gen
// cannot write, in the clientset's <kind>_expansion.go (clientexpansion.go).
// <output>/zz_generated.install.go installs every group-version and
// openapi-gen's definitions.
//
// The work is split in two: model.go (with fieldpath.go and
// printcolumn.go) reads types and markers into a model and reports every
// problem it finds with the type and marker at fault; resources.go and
// install.go only print the model through named templates. The facts must
// agree with the generated clientset (same plural, scope and status
// subresource), so the generator reads client-gen's own tags and refuses
// kubebuilder markers that contradict them.
package generators
