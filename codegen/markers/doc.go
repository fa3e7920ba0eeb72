// Package markers reads the type markers that shape how apiloom serves a
// kind: the kubebuilder vocabulary (+kubebuilder:resource,
// +kubebuilder:subresource:status, +kubebuilder:selectablefield,
// +kubebuilder:printcolumn) written the way controller-tools accepts it,
// and apiloom's own +apiloom:stream (a stream subresource).
// The schema markers (validation, defaults, CEL) are controller-tools' own
// business: package codegen/crdschema.
//
// A marker is one comment line: "+" name, then either nothing, ":" and a
// comma-separated list of key=value arguments, or "=" and a single value.
// Values are bare words, "double-quoted" Go strings, `back-quoted` strings,
// or lists written a;b;c or {a,b,c}.
//
// The package only parses; deciding what a marker means for a type, and
// which inconsistencies between markers are errors, is the generator's job.
// Malformed markers are errors wrapping ErrMalformed; keys a marker does not
// know are reported as warnings, so a typo never passes silently and a
// newer controller-tools key never breaks generation.
package markers
