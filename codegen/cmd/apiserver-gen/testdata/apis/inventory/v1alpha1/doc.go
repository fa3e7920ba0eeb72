// Package v1alpha1 is a golden-test input for apiserver-gen: a cluster-scoped
// Cactus whose plural is overridden and whose status is copied by
// assignment, and a Shelf with a pointer status and no kubebuilder markers.
// Deepcopy is opted into per type, not per package.
//
// +groupName=inventory.test.apiloom.dev
package v1alpha1
