// Package storage is the etcd-backed store for one resource: keys under a
// prefix, resourceVersion = etcd mod revision, creates and updates as
// transactions, consistent paginated lists and watches from a revision.
//
// Interface is the contract shared with the watch cache (server/cache); the
// conformance suite in storagetest runs against both.
package storage
