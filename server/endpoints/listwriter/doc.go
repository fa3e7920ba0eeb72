// Package listwriter writes a list response in any negotiated form: the
// resource's list kind, a Table or a PartialObjectMetadataList, as JSON,
// YAML, CBOR or protobuf. Items are encoded straight to the response one
// by one, copied from the producer's encodings when it keeps them (the
// watch cache), so a large list never exists as one buffer. It is separate
// from the verbs because list, deletecollection and the benchmarks share
// it, and from responsewriters because it needs Tables and storage's
// encodings, which a single document does not.
package listwriter
