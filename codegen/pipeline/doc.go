// Package pipeline is `make generate`: it runs every generator that turns a
// module's apis/ into code (code-generator's deepcopy, register,
// conversion, protobuf, clientset, lister, informer and apply-configuration
// generators, kube-openapi's openapi-gen and apiloom's apiserver-gen) in the
// order they depend on each other, for whichever module it runs in. The
// protobuf generator (go-to-protobuf) needs protoc on PATH, the one
// generator no Go module provides.
//
// Everything it needs is read from that module, never from apiloom's own
// layout: the module path from go.mod, the API packages from
// apis/<group>/<version>/doc.go files carrying +groupName, the header from
// hack/boilerplate.go.txt when the module has one, and the built-in kinds
// from builtin/apis.yaml, the module's own or else the one of the apiloom
// version the module requires. The generators are built from the module's
// go.mod (its `tool` directives pin them), so a module regenerates with
// exactly the versions it requires.
//
// apiloom's own `make generate` and every module `loom init` writes reach
// it the same way, `go tool apiloom-gen` (codegen/cmd/apiloom-gen).
package pipeline
