// Package v1 has a marker whose value does not parse.
//
// +groupName=badparse.test.apiloom.dev
package v1
