// Package endpoints serves the REST API of every resource: the verbs get,
// list, watch, create, update, patch, delete and deletecollection on
// /apis/{group}/{version}/[namespaces/{ns}/]{plural}[/{name}[/status]],
// speaking kube-apiserver's wire protocol closely enough that client-go,
// informers and kubectl cannot tell the difference (docs/architecture.md).
//
// The package is generic and knows no concrete type. NewResource binds one
// resource.Definition to a storage.Interface (the etcd store or the watch
// cache); NewHandler routes requests to those resources (router.go). Each
// verb is one thin file (get.go, list.go, watch.go, create.go, update.go,
// patch.go, apply.go, delete.go, scaleverbs.go); a write runs through the
// server's admission chain (admit.go, prepare.go). What the verbs share has
// a package of its own, which never imports this one: request options,
// limits and bodies (request), content negotiation (negotiation),
// responses and errors (responsewriters, listwriter, tableconvert,
// storageerr), patching (patch), managed fields (fieldmanager), the scale
// subresource (scale), watches (watch), deletion (deletion), and what a
// kind's definition does to a write (strategy). docs/architecture.md says
// which to touch for what.
//
// Objects storage returns may be shared with other readers (the watch
// cache's are) and are never modified; a watch event the producer encoded
// once is written as it is.
//
// Every failure a client can cause is answered with a metav1.Status
// carrying the code and reason kube-apiserver would use, and never changes
// what is stored. The bytes themselves (watch frames, object encoding,
// strict body decoding) come from server/wire, which the watch cache shares.
package endpoints
