package discovery

import (
	"fmt"

	"k8s.io/kube-openapi/pkg/builder3"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/apiloom/apiloom/server/resource"
)

// Models returns the OpenAPI v3 schemas of every kind in infos and of
// everything they refer to, keyed by component name, with each kind and
// list kind tagged with x-kubernetes-group-version-kind: the schemas the
// /openapi/v3 documents carry, in one map. It is what kube-apiserver builds
// its server-side apply type converter from
// (k8s.io/apimachinery/pkg/util/managedfields.NewTypeConverter), so the
// list types, map types and struct types openapi-gen recorded from the
// +listType, +listMapKey, +mapType and +structType markers decide how
// applied configurations merge.
//
// Models fails with ErrMissingDefinition when defs is nil or lacks a kind.
func Models(infos []*resource.Info, defs common.GetOpenAPIDefinitions) (map[string]*spec.Schema, error) {
	if defs == nil {
		return nil, fmt.Errorf("%w: no OpenAPI definitions function", ErrMissingDefinition)
	}
	keys := []string{statusKey, deleteOptionsKey}
	for _, info := range infos {
		keys = append(keys, info.OpenAPIName, listKey(info))
	}
	all := defs(func(string) spec.Ref { return spec.Ref{} })
	if err := checkDefinitions(all, keys); err != nil {
		return nil, err
	}
	schemas, err := builder3.BuildOpenAPIDefinitionsForResources(&common.OpenAPIV3Config{
		GetDefinitions:    defs,
		GetDefinitionName: newSchemaNamer(infos).definitionName,
	}, keys...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMissingDefinition, err)
	}
	if err := mergeSchemasV3(schemas, infos); err != nil {
		return nil, err
	}
	for _, info := range infos {
		decorateKind(schemas[schemaName(info.OpenAPIName)], info)
	}
	return schemas, nil
}
