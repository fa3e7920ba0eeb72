package discovery

import (
	"fmt"
	"slices"
	"strings"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kube-openapi/pkg/builder"
	"k8s.io/kube-openapi/pkg/builder3"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/util"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/apiloom/apiloom/server/resource"
)

// Keys of the apimachinery definitions the operations refer to, as
// openapi-gen keys them (their OpenAPI model names).
var (
	statusKey        = metav1.Status{}.OpenAPIModelName()
	deleteOptionsKey = metav1.DeleteOptions{}.OpenAPIModelName()
	patchKey         = metav1.Patch{}.OpenAPIModelName()
	// scaleKey is autoscaling/v1 Scale, the body of every /scale
	// subresource; hack/update-codegen.sh gives openapi-gen its package.
	scaleKey = autoscalingv1.Scale{}.OpenAPIModelName()
)

// scaleGVK is the group-version-kind of scaleKey.
var scaleGVK = gvkExtension("autoscaling", "v1", "Scale")

// Extensions kube-apiserver puts on schemas and operations.
const (
	extGVK              = "x-kubernetes-group-version-kind"
	extAction           = "x-kubernetes-action"
	extSelectableFields = "x-kubernetes-selectable-fields"
)

// schemaName is the component name of the definition openapi-gen keyed as
// key. openapi-gen keys apimachinery types by their model name
// ("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"), which is used as is,
// and other types by Go import path and type name, which get
// kube-apiserver's REST-friendly form: the domain reversed and slashes made
// dots ("github.com/apiloom/apiloom/apis/example/v1.Database" ->
// "com.github.apiloom.apiloom.apis.example.v1.Database").
func schemaName(key string) string {
	if strings.Contains(key, "/") {
		return util.ToRESTFriendlyName(key)
	}
	return key
}

// listKey is the definition key of info's list type: the kind's key with
// the type name replaced, since openapi-gen keys both by the same package.
func listKey(info *resource.Info) string {
	return info.OpenAPIName[:strings.LastIndex(info.OpenAPIName, ".")+1] + info.ListKind
}

// gvkExtension is a group-version-kind in the shape the extension uses.
func gvkExtension(group, version, kind string) map[string]any {
	return map[string]any{"group": group, "version": version, "kind": kind}
}

// schemaNamer names definitions and tags those that are kinds with
// x-kubernetes-group-version-kind (always a list on schemas), which is how
// kubectl explain finds a kind's schema and kubectl apply its patch type.
type schemaNamer struct {
	gvks map[string][]any // definition key -> extension value
}

func newSchemaNamer(infos []*resource.Info) *schemaNamer {
	n := &schemaNamer{gvks: map[string][]any{
		statusKey:        {gvkExtension("", "v1", "Status")},
		deleteOptionsKey: {gvkExtension("", "v1", "DeleteOptions")},
		scaleKey:         {scaleGVK},
	}}
	for _, info := range infos {
		n.gvks[info.OpenAPIName] = append(n.gvks[info.OpenAPIName], gvkExtension(info.Group, info.Version, info.Kind))
		if !info.CreateOnly {
			n.gvks[listKey(info)] = append(n.gvks[listKey(info)], gvkExtension(info.Group, info.Version, info.ListKind))
		}
	}
	// The types a kind's own subresources read and answer are kinds of
	// its group-version when they are in its package (register-gen
	// registers them there), as kube-apiserver marks policy/v1 Eviction.
	// The kinds themselves were marked above.
	for _, info := range infos {
		pkg := info.OpenAPIName[:strings.LastIndex(info.OpenAPIName, ".")+1]
		for _, key := range customKeys(info) {
			if _, marked := n.gvks[key]; marked || !strings.HasPrefix(key, pkg) || strings.Contains(key[len(pkg):], ".") {
				continue
			}
			n.gvks[key] = []any{gvkExtension(info.Group, info.Version, key[len(pkg):])}
		}
	}
	return n
}

// definitionName implements common.Config's GetDefinitionName.
func (n *schemaNamer) definitionName(key string) (string, spec.Extensions) {
	if gvks, ok := n.gvks[key]; ok {
		return schemaName(key), spec.Extensions{extGVK: gvks}
	}
	return schemaName(key), nil
}

// rootKeys are the definitions a group-version's documents refer to
// directly; everything else is reached through their dependencies.
func rootKeys(v *groupVersion) []string {
	keys := []string{statusKey, deleteOptionsKey, patchKey}
	scale := false
	for _, info := range v.resources {
		keys = append(keys, info.OpenAPIName)
		if !info.CreateOnly {
			keys = append(keys, listKey(info))
		}
		keys = append(keys, customKeys(info)...)
		scale = scale || info.Scale != nil
	}
	if scale {
		keys = append(keys, scaleKey)
	}
	return keys
}

// checkDefinitions reports the root definitions defs lacks, so New fails
// with a useful message rather than kube-openapi's.
func checkDefinitions(defs map[string]common.OpenAPIDefinition, keys []string) error {
	var missing []string
	for _, k := range keys {
		if _, ok := defs[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s", ErrMissingDefinition, strings.Join(missing, ", "))
	}
	return nil
}

// componentSchemasV3 renders the definitions of v's kinds, their lists and
// the meta types the operations use, plus everything they depend on and
// nothing else, with refs to "#/components/schemas/...". kube-openapi's
// builder3 does the transitive walk, drops the embedded v2 schemas and
// wraps refs that have siblings in allOf, as OpenAPI v3 requires.
func componentSchemasV3(defs common.GetOpenAPIDefinitions, namer *schemaNamer, v *groupVersion) (map[string]*spec.Schema, error) {
	keys := rootKeys(v)
	schemas, err := builder3.BuildOpenAPIDefinitionsForResources(&common.OpenAPIV3Config{
		GetDefinitions:    defs,
		GetDefinitionName: namer.definitionName,
	}, keys...)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrMissingDefinition, v.gv, err)
	}
	if err := mergeSchemasV3(schemas, v.resources); err != nil {
		return nil, err
	}
	for _, info := range v.resources {
		decorateKind(schemas[schemaName(info.OpenAPIName)], info)
	}
	return schemas, nil
}

// mergeSchemasV3 lays each kind's published schema over OpenAPI v3
// component schemas (constraints.go).
func mergeSchemasV3(schemas map[string]*spec.Schema, infos []*resource.Info) error {
	m := newSchemaMerger("#/components/schemas/", true,
		func(name string) (spec.Schema, bool) {
			s, ok := schemas[name]
			if !ok || s == nil {
				return spec.Schema{}, false
			}
			return *s, true
		},
		func(name string, s spec.Schema) { schemas[name] = &s })
	for _, info := range infos {
		published, err := publishedSchema(info, false)
		if err != nil {
			return err
		}
		if err := m.mergeKind(info, published); err != nil {
			return err
		}
	}
	return nil
}

// mergeSchemasV2 is mergeSchemasV3 for OpenAPI v2 definitions.
func mergeSchemasV2(defs spec.Definitions, infos []*resource.Info) error {
	m := newSchemaMerger("#/definitions/", false,
		func(name string) (spec.Schema, bool) { s, ok := defs[name]; return s, ok },
		func(name string, s spec.Schema) { defs[name] = s })
	for _, info := range infos {
		published, err := publishedSchema(info, true)
		if err != nil {
			return err
		}
		if err := m.mergeKind(info, published); err != nil {
			return err
		}
	}
	return nil
}

// definitionsV2 is componentSchemasV3 for OpenAPI v2: refs to
// "#/definitions/...", and the v2 variants of types that have one.
func definitionsV2(defs common.GetOpenAPIDefinitions, namer *schemaNamer, groups []*apiGroup) (spec.Definitions, error) {
	var keys []string
	for _, g := range groups {
		for _, v := range g.versions {
			keys = append(keys, rootKeys(v)...)
		}
	}
	sw, err := builder.BuildOpenAPIDefinitionsForResources(&common.Config{
		GetDefinitions:    defs,
		GetDefinitionName: namer.definitionName,
	}, keys...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMissingDefinition, err)
	}
	var infos []*resource.Info
	for _, g := range groups {
		for _, v := range g.versions {
			infos = append(infos, v.resources...)
		}
	}
	if err := mergeSchemasV2(sw.Definitions, infos); err != nil {
		return nil, err
	}
	for _, g := range groups {
		for _, v := range g.versions {
			for _, info := range v.resources {
				s := sw.Definitions[schemaName(info.OpenAPIName)]
				decorateKind(&s, info)
				sw.Definitions[schemaName(info.OpenAPIName)] = s
			}
		}
	}
	return sw.Definitions, nil
}

// typeMetaDoc describes apiVersion and kind.
var typeMetaDoc = metav1.TypeMeta{}.SwaggerDoc()

// decorateKind adds to a kind's schema what kube-apiserver adds to a CRD's:
// apiVersion and kind properties (openapi-gen already has them when the type
// embeds TypeMeta) and the selectable fields. s belongs to the document
// being built alone (every document calls the definitions function afresh),
// so it may be changed.
func decorateKind(s *spec.Schema, info *resource.Info) {
	if s == nil {
		return
	}
	for _, p := range []string{"apiVersion", "kind"} {
		if _, ok := s.Properties[p]; !ok {
			s.SetProperty(p, *spec.StringProperty().WithDescription(typeMetaDoc[p]))
		}
	}
	if len(info.SelectableFields) > 0 {
		fields := make([]any, 0, len(info.SelectableFields))
		for _, f := range slices.Sorted(slices.Values(info.SelectableFields)) {
			fields = append(fields, map[string]any{"fieldPath": f})
		}
		s.AddExtension(extSelectableFields, fields)
	}
}
