// Package openapi stands in for openapi-gen's output in apiserver-gen's
// golden test, so the golden install file compiles.
package openapi

import "k8s.io/kube-openapi/pkg/common"

// GetOpenAPIDefinitions has openapi-gen's signature and defines nothing.
func GetOpenAPIDefinitions(common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	return nil
}
