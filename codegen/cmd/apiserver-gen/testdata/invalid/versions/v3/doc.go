// Package v3 lacks +k8s:conversion-gen.
//
// +groupName=versions.test.apiloom.dev
package v3
