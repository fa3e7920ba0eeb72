// Package v1 holds the hooks of the example.apiloom.dev/v1 kinds: the
// logic their markers cannot state. apiserver-gen wires the methods of
// the types named after the kinds (Database, Region) into the generated
// resource Definitions; docs/hooks.md describes the names and
// signatures it looks for.
package v1
