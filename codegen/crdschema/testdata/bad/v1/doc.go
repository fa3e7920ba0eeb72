// Package v1 has markers crdschema must refuse, each with its position.
//
// +groupName=bad.test.apiloom.dev
// +kubebuilder:validaton:Optional
package v1
