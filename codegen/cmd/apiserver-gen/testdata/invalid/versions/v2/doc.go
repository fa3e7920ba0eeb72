// Package v2 names v1 for conversion-gen but has no conversions.
//
// +groupName=versions.test.apiloom.dev
// +k8s:conversion-gen=github.com/apiloom/apiloom/codegen/cmd/apiserver-gen/testdata/invalid/versions/v1
package v2
