// Package v1 is the schema fidelity input: one kind, Gadget, whose fields
// carry every marker controller-gen turns into schema, so the golden test
// can compare apiserver-gen's Info.Schema with the CRD the controller-gen
// binary writes (testdata/controller-gen). Fields are required unless
// marked optional: the package says so.
//
// +groupName=gadgets.test.apiloom.dev
// +k8s:deepcopy-gen=package
// +kubebuilder:validation:Required
package v1
