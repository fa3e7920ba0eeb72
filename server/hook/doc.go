// Package hook is the API of a kind's own logic: Go functions the
// generic server calls in its admission pipeline on every write of the
// kind, typed by the kind (a Database's hooks receive *v1.Database).
//
// A kind's hooks are methods of a type named after the kind in the
// package hooks/<group>/<version> of the module (beside apis/, which
// keeps importing only apimachinery); apiserver-gen finds them by name
// and signature and wires them into the kind's generated
// resource.Definition (Hooks). docs/hooks.md says how and why.
//
// The server calls them in this order, on every path that writes
// (create, update, JSON/merge/strategic patch, apply, /status, /scale,
// delete, deletecollection, each with dryRun): after the schema's
// defaults, Default; then PrepareForCreate or PrepareForUpdate (or
// PrepareForStatusUpdate for /status); once the metadata, the schema
// and its CEL rules accept the object, ValidateCreate, ValidateUpdate
// (ValidateStatusUpdate) or, for a delete, ValidateDelete. Each call
// gets a *Request: the operation, the subresource, dryRun, the user,
// and read access to every served kind through the server's watch
// caches (Get, List): as the cache is, or with Consistent() seeing every
// write acknowledged before the read, for a hook whose refusal rests on
// what it reads. A hook that panics or outlives the server's
// --hook-timeout fails only its request (500 InternalError), logged.
package hook
