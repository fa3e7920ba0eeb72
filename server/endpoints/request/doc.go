// Package request reads what a request brings to a resource apart from the
// object itself: the query parameters of every verb (list and watch,
// write, delete and table options), parsed by hand and refused with the
// exact Status kube-apiserver returns; the body's bytes, within the Limits
// that bound what one request may make a handler do, as JSON whatever
// syntax it came in (YAML, CBOR, protobuf: BodyJSON); and the 400s of a
// body that does not decode or names another kind. It knows nothing of
// handlers, so that the options a verb takes and their validation can be
// read, tested and fuzzed in one place.
package request
