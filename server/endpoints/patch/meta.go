package patch

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// schemaRefPrefix is where refs point in Schemas: the OpenAPI v3 form that
// strategicpatch.PatchMetaFromOpenAPIV3 resolves.
const schemaRefPrefix = "#/components/schemas/"

// Schemas are the OpenAPI definitions of a server's types, resolved once
// and shared, read-only, by all its resources. Strategic merge patch takes
// each field's patch strategy and merge key from them: from the
// x-kubernetes-patch-strategy and x-kubernetes-patch-merge-key extensions,
// which openapi-gen writes from the patchStrategy/patchMergeKey tags and
// the registry adds for +listType=map lists. Those are the extensions
// kubectl reads, from the OpenAPI documents discovery serves from the same
// definitions, so a patch kubectl computes and the way the server applies
// it agree by construction.
type Schemas struct {
	byKey map[string]*spec.Schema // definition key -> schema
	names map[*spec.Schema]string // definition schema -> Go type name
}

// NewSchemas resolves defs, which must not be nil.
func NewSchemas(defs common.GetOpenAPIDefinitions) *Schemas {
	d := defs(func(key string) spec.Ref { return spec.MustCreateRef(schemaRefPrefix + key) })
	s := &Schemas{byKey: make(map[string]*spec.Schema, len(d)), names: make(map[*spec.Schema]string, len(d))}
	for key, def := range d {
		sch := def.Schema
		s.byKey[key] = &sch
		// Keys are Go paths ("example.com/apis/v1.Database") or model
		// names ("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"); both
		// end in the type name.
		s.names[&sch] = key[strings.LastIndexByte(key, '.')+1:]
	}
	return s
}

// Meta is the strategic merge patch meta of the type whose definition in
// s is openAPIName or, without s, of obj's struct tags.
func Meta(s *Schemas, openAPIName string, obj any) (strategicpatch.LookupPatchMeta, error) {
	if s == nil {
		return strategicpatch.NewPatchMetaFromStruct(obj)
	}
	root, ok := s.byKey[openAPIName]
	if !ok {
		return nil, fmt.Errorf("no OpenAPI definition %q", openAPIName)
	}
	return patchMeta{PatchMetaFromOpenAPIV3: strategicpatch.PatchMetaFromOpenAPIV3{SchemaList: s.byKey, Schema: root}, schemas: s}, nil
}

// patchMeta is strategicpatch's own OpenAPI v3 patch meta, the one kubectl
// computes patches with, walking one schema of Schemas. It answers what
// kube-apiserver's struct-tag meta answers, errors worded alike: the
// library's OpenAPI meta would call a field of a map "not found", would
// not name the struct that lacks a field, and would match field names
// only exactly, where encoding/json's rules (which the struct-tag meta
// follows) also match them ignoring case. One difference is left: a
// $setElementOrder naming a field that is no list and is absent from
// both the object and the patch is a 500 here, which kube-apiserver
// ignores when the Go field is a pointer; OpenAPI does not tell pointers.
type patchMeta struct {
	strategicpatch.PatchMetaFromOpenAPIV3
	schemas *Schemas
}

var _ strategicpatch.LookupPatchMeta = patchMeta{}

// LookupPatchMetadataForStruct implements strategicpatch.LookupPatchMeta.
func (m patchMeta) LookupPatchMetadataForStruct(key string) (strategicpatch.LookupPatchMeta, strategicpatch.PatchMeta, error) {
	if m.Schema != nil {
		name, _, err := m.field(key)
		if err != nil {
			return nil, strategicpatch.PatchMeta{}, err
		}
		key = name
	}
	sub, pm, err := m.PatchMetaFromOpenAPIV3.LookupPatchMetadataForStruct(key)
	if err != nil {
		return nil, strategicpatch.PatchMeta{}, err
	}
	return m.at(sub), pm, nil
}

// LookupPatchMetadataForSlice implements strategicpatch.LookupPatchMeta.
func (m patchMeta) LookupPatchMetadataForSlice(key string) (strategicpatch.LookupPatchMeta, strategicpatch.PatchMeta, error) {
	if m.Schema != nil {
		name, f, err := m.field(key)
		if err != nil {
			return nil, strategicpatch.PatchMeta{}, err
		}
		if !f.Type.Contains("array") {
			// kube-apiserver names the kind of the struct holding the field.
			return nil, strategicpatch.PatchMeta{}, errors.New("expected slice or array type, but got: struct")
		}
		key = name
	}
	sub, pm, err := m.PatchMetaFromOpenAPIV3.LookupPatchMetadataForSlice(key)
	if err != nil {
		return nil, strategicpatch.PatchMeta{}, err
	}
	return m.at(sub), pm, nil
}

// Name implements strategicpatch.LookupPatchMeta with the Go kind names
// kube-apiserver's messages use ("cannot merge lists without merge key
// for struct").
func (m patchMeta) Name() string {
	s := m.Schema
	switch {
	case s == nil:
		return "struct"
	case m.schemas.names[s] != "" || len(s.Properties) > 0:
		return "struct"
	case s.AdditionalProperties != nil:
		return "map"
	case s.Type.Contains("array"):
		return "slice"
	}
	return m.PatchMetaFromOpenAPIV3.Name()
}

// field is the name and schema of the field key of the current schema
// (not nil), which must describe a struct: the property named key, else
// the first, in sorted order, whose name equals it ignoring case. Its
// errors are those of kube-apiserver's struct-tag lookup. Below a schema
// without items the library knows nothing, and field is not called there.
func (m patchMeta) field(key string) (string, spec.Schema, error) {
	s := m.Schema
	if f, ok := s.Properties[key]; ok {
		return key, f, nil
	}
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		if strings.EqualFold(name, key) {
			return name, s.Properties[name], nil
		}
	}
	if s.AdditionalProperties != nil && len(s.Properties) == 0 {
		return "", spec.Schema{}, errors.New("merging an object in json but data type is not struct, instead is: map")
	}
	return "", spec.Schema{}, fmt.Errorf("unable to find api field in struct %s for the json field %q", m.schemas.names[s], key)
}

// at is m moved to sub, the library's meta of a field's schema.
func (m patchMeta) at(sub strategicpatch.LookupPatchMeta) strategicpatch.LookupPatchMeta {
	v3, ok := sub.(strategicpatch.PatchMetaFromOpenAPIV3)
	if !ok {
		return sub
	}
	return patchMeta{PatchMetaFromOpenAPIV3: v3, schemas: m.schemas}
}
