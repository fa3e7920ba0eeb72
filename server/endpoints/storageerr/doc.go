// Package storageerr turns storage's errors (server/storage.Error) into
// the API errors kube-apiserver answers with, worded as it words them for
// the request's verb: 404 and 409 with the resource and name, 410 Expired
// for a compacted revision, 504 for a resourceVersion from the future, 507
// for a full etcd, 500 for an object that does not decode.
package storageerr
