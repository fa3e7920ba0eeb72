// Package v1 is the example API group every newcomer reads first: a namespaced
// Database with spec and status, and a cluster-scoped Region it is placed in.
//
// +groupName=example.apiloom.dev
// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
package v1
