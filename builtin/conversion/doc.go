// Package conversion holds the conversions between built-in kinds served
// in several API groups over one stored object (builtin/apis.yaml names
// them in a kind's `storage`). kube-apiserver stores events.k8s.io/v1
// Events as core/v1 Events, at one key, and serves each in both groups;
// apiloom does the same with these functions, written against the
// k8s.io/api types (kube-apiserver's go through its internal types).
//
// Each has conversion-gen's signature, func(in *A, out *B, s
// conversion.Scope) error, and follows the server's contract for
// conversions (resource.Conversion): it never changes in, and out may
// share memory with it.
package conversion
