// Package endpoints serves the REST API of every resource: the verbs get,
// list, watch, create, update, patch, delete and deletecollection on
// /apis/{group}/{version}/[namespaces/{ns}/]{plural}[/{name}[/status]],
// speaking kube-apiserver's wire protocol closely enough that client-go,
// informers and kubectl cannot tell the difference (docs/architecture.md).
//
// The package is generic and knows no concrete type. NewResource binds one
// resource.Definition to a storage.Interface (the etcd store or the watch
// cache); NewHandler routes requests to those resources. Each verb lives in
// its own file (get.go, list.go, watch.go, create.go, update.go, patch.go,
// with server-side apply in apply.go, delete.go, with WebSocket watches in
// websocket.go, and in watchsource.go
// the watch an HTTP/2 connection pulls without a goroutine of its own:
// see server/detach); what they share is
// split by concern: the routes (router.go), query options (options.go),
// request bodies (body.go), the managed fields every write records
// (package fieldmanager) and storage errors as API errors (status.go).
// Content negotiation (package negotiation), writing responses and errors
// as metav1.Status (package responsewriters), Tables with the resource's
// printer columns (package tableconvert), the scale subresource's model
// (package scale) and what a kind's definition does to a write (package
// strategy) have packages of their own, which never import this one.
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
