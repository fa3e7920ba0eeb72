// Package formats checks that every kind of apis/ survives the encodings
// apiloom serves (JSON and CBOR) with no loss, on objects filled at
// random: the checks run over the generated clientset's scheme, so a new
// group or kind is covered by `make generate` alone.
package formats
