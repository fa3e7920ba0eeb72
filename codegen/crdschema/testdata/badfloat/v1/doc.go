// Package v1 has a float, which controller-gen refuses by default.
//
// +groupName=badfloat.test.apiloom.dev
package v1
