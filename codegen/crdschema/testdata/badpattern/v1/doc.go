// Package v1 has a pattern that does not compile.
//
// +groupName=badpattern.test.apiloom.dev
package v1
