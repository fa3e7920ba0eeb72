// Package v1 is a golden-test input for apiserver-gen: a namespaced Order
// with status and selectable fields of every supported kind, a
// cluster-scoped Warehouse without status, and a Receipt whose Status is
// not a subresource (+genclient:noStatus).
//
// +groupName=shop.test.apiloom.dev
// +k8s:deepcopy-gen=package
package v1
