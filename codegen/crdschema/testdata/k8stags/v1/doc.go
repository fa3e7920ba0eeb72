// Package v1 uses Kubernetes' declarative validation tags.
//
// +groupName=k8stags.test.apiloom.dev
package v1
