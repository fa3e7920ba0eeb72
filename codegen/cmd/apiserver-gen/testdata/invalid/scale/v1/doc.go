// Package v1 holds one resource per way a +kubebuilder:subresource:scale
// marker can be wrong (see generators/scale_test.go), plus one that is
// right.
//
// +groupName=scale.invalid.test.apiloom.dev
// +k8s:deepcopy-gen=package
package v1
