// Package fieldmanager keeps the managed fields (metadata.managedFields) of
// one resource's objects with k8s.io/apimachinery's field manager: who set
// which field, per write endpoint and per version of the kind. It is apart
// from the REST handlers because it owns no request: handlers name the
// manager and the endpoint of a write, and this package records it.
package fieldmanager
