// Package storage is the etcd-backed store for one resource: keys under a
// prefix, resourceVersion = etcd mod revision, creates and updates as
// transactions, consistent paginated lists and watches from a revision.
//
// Interface is the contract shared with the watch cache (server/cache); the
// conformance suite in storagetest runs against both.
//
// Store (store.go, update.go, delete.go, list.go, watch.go) implements
// Interface on etcd. Objects are stored as JSON with kind and apiVersion and
// without resourceVersion, at ResourcePrefix(root, info) + Key(ns, name).
// Every write is a transaction conditioned on the revision the writer read,
// so replicas sharing one etcd never lose each other's writes. Each Watch
// owns one goroutine that reads one etcd watch into a bounded queue
// (queue.go); a consumer that falls too far behind gets ErrExpired, never a
// gap. Continue tokens (continue.go) use kube-apiserver's format and are
// shared with the cache. Compactor (compact.go) removes old history once
// per interval across replicas.
//
// The transactions it sends are exactly kube-apiserver's, the subset of
// etcd's API that kine and other etcd-API backends implement, and nothing
// else (TestTxnContract fails on any other shape):
//   - create: If(ModRevision(key) = 0) Then(Put);
//   - update: If(ModRevision(key) = rev) Then(Put) Else(Get);
//   - delete: If(ModRevision(key) = rev) Then(Delete) Else(Get);
//   - compaction: If(Version(compact key) = version) Then(Put) Else(Get),
//     then Compact, as kube-apiserver's compactor.
//
// Reads are linearizable ranges (at a revision, with a limit), never
// serializable. test/kine runs the conformance suite on kine over SQLite.
package storage
