// Package v1 holds kinds with custom subresources, one per way their
// markers or hooks methods can be wrong (see generators/custom_test.go),
// plus one that is right. Their hooks are in
// generators/testdata/hooks/custom/v1.
//
// +groupName=custom.invalid.test.apiloom.dev
// +k8s:deepcopy-gen=package
package v1
