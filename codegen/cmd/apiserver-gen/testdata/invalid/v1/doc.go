// Package v1 holds one broken resource per problem apiserver-gen must
// report (see generators/model_test.go), plus one that only draws warnings.
//
// +groupName=invalid.test.apiloom.dev
// +k8s:deepcopy-gen=package
package v1
