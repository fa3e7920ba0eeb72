// Package v1 has defaults kube-apiserver refuses.
//
// +groupName=baddefault.test.apiloom.dev
package v1
