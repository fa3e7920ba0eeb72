// Package v1 is a test group whose kinds have several versions.
//
// +groupName=versions.test.apiloom.dev
package v1
