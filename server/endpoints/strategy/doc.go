// Package strategy is what a resource's own definition does to its
// writes, kube-apiserver's registry strategy with BeforeCreate and
// BeforeUpdate: decoding a request's object into its form (the content a
// CRD would validate: pruned, defaulted, with what the request left out
// still missing), the kind's hooks, the fields the server owns
// (uid, creationTimestamp, generation, the deletion fields, a
// subresource's fields), and validation by the metadata rules, the kind's
// own rules and its schema with CEL, all violations in one 422 Invalid.
//
// One write is a Write, the KindStages the server's admission chain
// (server/admission) calls in its order: MutateHooks, Prepare, Validate,
// ValidateHooks. The handlers (server/endpoints) build it and run the
// chain; this package knows neither HTTP nor storage, and does not import
// server/endpoints.
package strategy
