// Package v1 has a CEL rule that does not compile.
//
// +groupName=badcel.test.apiloom.dev
package v1
