// Package gc is the garbage collector kube-controller-manager runs beside
// kube-apiserver, run inside the server (a controllers.Controller): it
// deletes objects whose owners (metadata.ownerReferences) are all gone,
// and carries out the propagation policy a DELETE asked for through the
// finalizers the server set (server/endpoints/deletion/propagation.go):
//
//   - Background: once an owner is gone, its dependents are deleted (each
//     with the policy its own finalizers ask for, so chains unwind).
//   - Foreground: an owner being deleted with the foregroundDeletion
//     finalizer has its dependents deleted (those that themselves have
//     dependents in the foreground too); the finalizer is removed once no
//     dependent with blockOwnerDeletion is left.
//   - Orphan: an owner being deleted with the orphan finalizer is removed
//     from its dependents' ownerReferences, then the finalizer is removed.
//
// A dependent with some owners still present only loses its references to
// the gone ones. An owner is gone when a live GET finds no object under
// its reference's name, or one with another UID, or (for a namespaced
// owner) none in the dependent's namespace: a reference across namespaces
// is treated as dangling, and reported with an OwnerRefInvalidNamespace
// event, as upstream does.
//
// How: one metadata informer per served resource (one version per group
// and resource) over the server's loopback client feeds a graph of
// owners and dependents (graph.go, builder.go); nodes whose fate may have
// changed go through two rate-limited work queues (attemptToDelete,
// attemptToOrphan) served by workers that verify with live reads before
// they act (collect.go, orphan.go). Everything is read from the watch
// caches; nothing polls etcd. A restart rebuilds the graph from the
// informers' initial lists, which resumes any collection in progress.
package gc
