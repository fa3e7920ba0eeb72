package discovery

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	openapiv2 "k8s.io/apiextensions-apiserver/pkg/controller/openapi/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/apiloom/apiloom/server/resource"
)

// This file publishes a kind's schema (resource.Info.Schema, what
// controller-gen writes as a CRD's openAPIV3Schema) in the OpenAPI
// documents, where openapi-gen's definitions already describe the kind.
//
// The schema is first turned into what kube-apiserver publishes for a CRD
// with the same schema (apiextensions-apiserver's openapi builder): the
// structural schema, unfolded (int-or-string gets its anyOf), and for
// OpenAPI v2 reduced as kube-apiserver reduces it for kubectl's client-side
// validation (no anyOf/allOf/oneOf/not; nullable and
// x-kubernetes-preserve-unknown-fields nodes lose their type, properties
// and items, because kubectl's v2 models reject unknown fields under
// declared properties and cannot type a nullable value; no defaults, which
// kube-apiserver prunes from all of /openapi/v2). Embedded resources get
// apiVersion, kind and metadata as kube-apiserver adds them.
//
// That schema is then laid over openapi-gen's definitions, walking both
// together. openapi-gen's nodes keep what only they carry: refs to shared
// definitions, x-kubernetes-patch-strategy and -merge-key (strategic merge
// patch and kubectl's client-side apply), the list and map types openapi-gen
// recorded (server-side apply's type converter), the kind's
// x-kubernetes-group-version-kind. Everything the schema says of a node
// (type, format, enum, default, bounds, pattern, lengths, counts, nullable,
// required, description, x-kubernetes-validations, -int-or-string,
// -preserve-unknown-fields, -embedded-resource) replaces openapi-gen's.
//
// A struct definition openapi-gen shares between fields (and kinds) gets
// only what its Go type decides: its properties with their constraints, and
// its required list. What a field's markers add to the struct it refers to
// (a default, a CEL rule or MinProperties on the field, nullable, ...) can
// differ from one field to the next, so it goes beside the ref, at the
// field, never into the shared definition. Below the referring node
// everything comes from the struct's own fields' markers and the types they
// name, so two walks reaching one definition must agree; mergeDefinition
// checks that they do and fails with ErrSchemaConflict if not, rather than
// give one kind another's constraints. A definition without structure of
// its own (runtime.RawExtension, intstr.IntOrString, resource.Quantity,
// metav1.Time, ...) is not shared at all: the field gets the schema's node
// inline, exactly as a CRD publishes it.

// ErrSchemaConflict is returned when two kinds' schemas say different things
// about a definition openapi-gen shares between them, which would need one
// definition to carry two sets of constraints.
var ErrSchemaConflict = errors.New("discovery: kinds' schemas disagree on a shared definition")

// ErrInvalidSchema is returned when a kind's Schema cannot be read as a
// structural schema.
var ErrInvalidSchema = errors.New("discovery: invalid kind schema")

const objectMetaName = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

// Extensions openapi-gen writes that the published schema keeps over the
// kind's schema's: the strategic merge patch ones (which a CRD's schema
// never has) and the list and map types (which both derive from the same
// markers; openapi-gen's are what the type converter has always used).
var openAPIGenExtensions = []string{
	"x-kubernetes-patch-strategy", "x-kubernetes-patch-merge-key",
	"x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-map-type",
}

// schemaExtensions are the extensions a structural schema can publish.
var schemaExtensions = []string{
	"x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource",
	"x-kubernetes-int-or-string", "x-kubernetes-validations",
	"x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-map-type",
}

// publishedSchema is info.Schema as kube-apiserver publishes a CRD's in
// OpenAPI v3 (v2 false) or v2; nil when the kind has no schema, and in v2
// when the root preserves unknown fields (kube-apiserver then publishes
// only "type: object", which openapi-gen's definition says already).
func publishedSchema(info *resource.Info, v2 bool) (*spec.Schema, error) {
	if info.Schema == "" {
		return nil, nil
	}
	var v1props apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal([]byte(info.Schema), &v1props); err != nil {
		return nil, fmt.Errorf("%w of kind %s: %v", ErrInvalidSchema, info.Kind, err)
	}
	var props apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&v1props, &props, nil); err != nil {
		return nil, fmt.Errorf("%w of kind %s: %v", ErrInvalidSchema, info.Kind, err)
	}
	s, err := structuralschema.NewStructural(&props)
	if err != nil {
		return nil, fmt.Errorf("%w of kind %s: %v", ErrInvalidSchema, info.Kind, err)
	}
	s = s.Unfold()
	if v2 {
		if s.XPreserveUnknownFields {
			return nil, nil
		}
		s = openapiv2.ToStructuralOpenAPIV2(s)
	}
	out := s.ToKubeOpenAPI()
	if v2 {
		pruneDefaults(out)
	}
	refPrefix := "#/components/schemas/"
	if v2 {
		refPrefix = "#/definitions/"
	}
	addEmbeddedProperties(out, v2, refPrefix)
	return out, nil
}

// pruneDefaults removes every default below s, as kube-apiserver removes
// them from /openapi/v2.
func pruneDefaults(s *spec.Schema) {
	if s == nil {
		return
	}
	s.Default = nil
	for k, p := range s.Properties {
		pruneDefaults(&p)
		s.Properties[k] = p
	}
	if s.Items != nil {
		pruneDefaults(s.Items.Schema)
	}
	if s.AdditionalProperties != nil {
		pruneDefaults(s.AdditionalProperties.Schema)
	}
}

var typeMetaDocs, objectMetaDoc = metav1.TypeMeta{}.SwaggerDoc(), metav1.ObjectMeta{}.SwaggerDoc()

// addEmbeddedProperties gives every x-kubernetes-embedded-resource node the
// apiVersion, kind and metadata properties, apiVersion and kind required,
// as kube-apiserver does for a CRD; in v2 not where unknown fields are
// preserved, where kubectl would then reject the unknown ones.
func addEmbeddedProperties(s *spec.Schema, v2 bool, refPrefix string) {
	if s == nil {
		return
	}
	for k, p := range s.Properties {
		addEmbeddedProperties(&p, v2, refPrefix)
		s.Properties[k] = p
	}
	if s.Items != nil {
		addEmbeddedProperties(s.Items.Schema, v2, refPrefix)
	}
	if s.AdditionalProperties != nil {
		addEmbeddedProperties(s.AdditionalProperties.Schema, v2, refPrefix)
	}
	if embedded, _ := s.Extensions.GetBool("x-kubernetes-embedded-resource"); !embedded {
		return
	}
	if preserve, _ := s.Extensions.GetBool("x-kubernetes-preserve-unknown-fields"); preserve && v2 {
		return
	}
	s.SetProperty("apiVersion", *spec.StringProperty().WithDescription(typeMetaDocs["apiVersion"]))
	s.SetProperty("kind", *spec.StringProperty().WithDescription(typeMetaDocs["kind"]))
	meta := spec.RefSchema(refPrefix + objectMetaName)
	if !v2 { // OpenAPI v3 ignores a $ref's siblings
		meta = &spec.Schema{SchemaProps: spec.SchemaProps{AllOf: []spec.Schema{*meta}}}
	}
	s.SetProperty("metadata", *meta.WithDescription(objectMetaDoc[""]))
	for _, r := range []string{"kind", "apiVersion"} {
		if !contains(s.Required, r) {
			s.Required = append(s.Required, r)
		}
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// schemaMerger lays kinds' published schemas over one document's
// definitions.
type schemaMerger struct {
	// get and set read and write the document's definition of a name.
	get func(name string) (spec.Schema, bool)
	set func(name string, s spec.Schema)
	// refPrefix is what refs to the document's definitions start with.
	refPrefix string
	v3        bool
	// merged records, per shared definition, what the first walk to reach
	// it laid over it (canonical JSON) and from where.
	merged map[string]mergeRecord
}

type mergeRecord struct {
	contribution string
	path         string
}

func newSchemaMerger(refPrefix string, v3 bool, get func(string) (spec.Schema, bool), set func(string, spec.Schema)) *schemaMerger {
	return &schemaMerger{get: get, set: set, refPrefix: refPrefix, v3: v3, merged: map[string]mergeRecord{}}
}

// mergeKind lays info's published schema over its definition. The root's
// metadata, apiVersion and kind stay openapi-gen's (ObjectMeta and
// TypeMeta), as kube-apiserver puts ObjectMeta and TypeMeta there too.
func (m *schemaMerger) mergeKind(info *resource.Info, published *spec.Schema) error {
	name := schemaName(info.OpenAPIName)
	def, ok := m.get(name)
	if !ok || published == nil {
		return nil
	}
	root := *published
	root.Properties = map[string]spec.Schema{}
	for k, p := range published.Properties {
		if k != "metadata" && k != "apiVersion" && k != "kind" {
			root.Properties[k] = p
		}
	}
	out, err := m.mergeInline(def, &root, info.Kind)
	if err != nil {
		return err
	}
	m.set(name, out)
	return nil
}

// node is gen, openapi-gen's node at path, with the schema's node s laid
// over it.
func (m *schemaMerger) node(gen spec.Schema, s *spec.Schema, path string) (spec.Schema, error) {
	if s == nil {
		return gen, nil
	}
	name, isRef := m.refName(gen)
	if !isRef {
		return m.mergeInline(gen, s, path)
	}
	def, ok := m.get(name)
	if !ok {
		return gen, nil
	}
	if !structured(&def) || !structured(s) {
		// Nothing to share: the field is described by the schema alone,
		// inline, as in a CRD.
		out := *s
		if out.Description == "" {
			out.Description = gen.Description
		}
		keepExtensions(&out, gen.Extensions)
		return out, nil
	}
	use, shared := splitUse(s)
	if sameText(use.Description, def.Description) {
		// The type's own doc, which the definition already says; kubectl
		// explain would print it twice.
		use.Description = gen.Description
	}
	if err := m.mergeDefinition(name, shared, path); err != nil {
		return spec.Schema{}, err
	}
	return m.refWithUse(gen, use), nil
}

// sameText is whether a and b are the same text but for line breaks and
// spacing (controller-gen keeps a comment's line breaks, openapi-gen does
// not always).
func sameText(a, b string) bool {
	return strings.Join(strings.Fields(a), " ") == strings.Join(strings.Fields(b), " ")
}

// refName is the definition gen refers to: by $ref, or in OpenAPI v3 by the
// single allOf entry kube-openapi wraps a ref with siblings in.
func (m *schemaMerger) refName(gen spec.Schema) (string, bool) {
	ref := gen.Ref.String()
	if ref == "" && len(gen.AllOf) == 1 {
		ref = gen.AllOf[0].Ref.String()
	}
	name, ok := strings.CutPrefix(ref, m.refPrefix)
	return name, ok && name != ""
}

// structured is whether s describes the structure of an object or array
// (properties, items or additionalProperties): a definition without any
// is opaque (RawExtension, IntOrString, Time, ...).
func structured(s *spec.Schema) bool {
	return len(s.Properties) > 0 || s.Items != nil || s.AdditionalProperties != nil
}

// splitUse splits a schema node that refers to a struct into what the
// struct's Go type decides (type, properties, required; shared by every
// field of that type) and the rest, which the field's own markers may add
// (published beside the ref).
func splitUse(s *spec.Schema) (use, shared spec.Schema) {
	shared = spec.Schema{SchemaProps: spec.SchemaProps{
		Type:                 s.Type,
		Properties:           s.Properties,
		Required:             s.Required,
		Items:                s.Items,
		AdditionalProperties: s.AdditionalProperties,
	}}
	use = *s
	use.Type, use.Properties, use.Required, use.Items, use.AdditionalProperties = nil, nil, nil, nil, nil
	// The list and map types are the struct's, and openapi-gen has them.
	use.Extensions = without(s.Extensions, "x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-map-type")
	for _, k := range []string{"x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-map-type"} {
		if v, ok := s.Extensions[k]; ok {
			shared.AddExtension(k, v)
		}
	}
	return use, shared
}

// refWithUse is the referring node gen with the field's own constraints
// use. In OpenAPI v3 a $ref's siblings are ignored, so the ref goes into
// allOf as kube-openapi puts it when openapi-gen's node has siblings.
func (m *schemaMerger) refWithUse(gen spec.Schema, use spec.Schema) spec.Schema {
	ref := gen.Ref
	if ref.String() == "" {
		ref = gen.AllOf[0].Ref
	}
	out := use
	if out.Description == "" {
		out.Description = gen.Description
	}
	keepExtensions(&out, gen.Extensions)
	if m.v3 {
		out.AllOf = append([]spec.Schema{{SchemaProps: spec.SchemaProps{Ref: ref}}}, use.AllOf...)
		if len(out.AllOf) == 1 && isOnlyAllOf(out) {
			return *spec.RefSchema(ref.String())
		}
		return out
	}
	out.Ref = ref
	return out
}

// isOnlyAllOf is whether s has nothing but its allOf.
func isOnlyAllOf(s spec.Schema) bool {
	s.AllOf = nil
	b, _ := json.Marshal(s)
	return string(b) == "{}"
}

// mergeDefinition lays shared, the struct part of the node at path, over
// the shared definition name, once; a later walk must bring the same.
func (m *schemaMerger) mergeDefinition(name string, shared spec.Schema, path string) error {
	b, err := json.Marshal(shared)
	if err != nil {
		return err
	}
	if prev, ok := m.merged[name]; ok {
		if prev.contribution != string(b) {
			return fmt.Errorf("%w: %s is %s at %s but %s at %s", ErrSchemaConflict, name, prev.contribution, prev.path, b, path)
		}
		return nil
	}
	m.merged[name] = mergeRecord{contribution: string(b), path: path}
	def, _ := m.get(name)
	out, err := m.mergeInline(def, &shared, path)
	if err != nil {
		return err
	}
	m.set(name, out)
	return nil
}

// mergeInline lays s over gen, a node openapi-gen wrote inline (no ref),
// and walks into properties, items and additionalProperties.
func (m *schemaMerger) mergeInline(gen spec.Schema, s *spec.Schema, path string) (spec.Schema, error) {
	out := *s
	out.Properties, out.Items, out.AdditionalProperties = nil, nil, nil
	if out.Description == "" {
		out.Description = gen.Description
	}
	out.Extensions = nil
	for k, v := range gen.Extensions {
		if !contains(schemaExtensions, k) {
			out.AddExtension(k, v)
		}
	}
	for k, v := range s.Extensions {
		out.AddExtension(k, v)
	}
	keepExtensions(&out, gen.Extensions)
	if s.Properties != nil {
		out.Properties = make(map[string]spec.Schema, len(s.Properties))
		for k, g := range gen.Properties {
			out.Properties[k] = g // kept where the schema says nothing (a root's metadata)
		}
		for k := range s.Properties {
			p := s.Properties[k]
			merged, err := m.node(gen.Properties[k], &p, path+"."+k)
			if err != nil {
				return spec.Schema{}, err
			}
			out.Properties[k] = merged
		}
	}
	if s.Items != nil && s.Items.Schema != nil {
		var g spec.Schema
		if gen.Items != nil && gen.Items.Schema != nil {
			g = *gen.Items.Schema
		}
		merged, err := m.node(g, s.Items.Schema, path+"[*]")
		if err != nil {
			return spec.Schema{}, err
		}
		out.Items = &spec.SchemaOrArray{Schema: &merged}
	}
	if a := s.AdditionalProperties; a != nil {
		out.AdditionalProperties = &spec.SchemaOrBool{Allows: a.Allows}
		if a.Schema != nil {
			var g spec.Schema
			if gen.AdditionalProperties != nil && gen.AdditionalProperties.Schema != nil {
				g = *gen.AdditionalProperties.Schema
			}
			merged, err := m.node(g, a.Schema, path+"[*]")
			if err != nil {
				return spec.Schema{}, err
			}
			out.AdditionalProperties.Schema = &merged
		}
	}
	return out, nil
}

// keepExtensions puts openapi-gen's own extensions (openAPIGenExtensions)
// on s, over the schema's.
func keepExtensions(s *spec.Schema, gen spec.Extensions) {
	for _, k := range openAPIGenExtensions {
		if v, ok := gen[k]; ok {
			s.AddExtension(k, v)
		}
	}
}

// without is a copy of ext without keys; nil when nothing is left.
func without(ext spec.Extensions, keys ...string) spec.Extensions {
	var out spec.Extensions
	for k, v := range ext {
		if !contains(keys, k) {
			if out == nil {
				out = spec.Extensions{}
			}
			out[k] = v
		}
	}
	return out
}
