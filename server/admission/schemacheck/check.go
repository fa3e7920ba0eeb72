package schemacheck

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	kjson "sigs.k8s.io/json"

	"github.com/apiloom/apiloom/server/resource"
)

// ErrInvalidSchema is wrapped by every error New returns: the kind's schema
// is one kube-apiserver would refuse in a CRD.
var ErrInvalidSchema = errors.New("schemacheck: invalid schema")

// Check defaults and validates one kind's objects by its schema. It is
// immutable after New and safe for concurrent use.
type Check struct {
	// structural is the structural schema, with defaults pruned as
	// kube-apiserver prunes them before serving a CRD.
	structural *structuralschema.Structural
	// schema validates the whole object; status validates .status alone
	// (nil without a status subresource or a status property).
	schema, status apiservervalidation.SchemaValidator
	// cel evaluates the x-kubernetes-validations rules; nil when there are
	// none.
	cel *cel.Validator
	// hasDefaults is whether any node of the schema has a default, so
	// objects of kinds without defaults are never walked for them.
	hasDefaults bool
}

// New checks info.Schema as kube-apiserver checks a CRD's schema when the
// CRD is created, and returns what validates and defaults the kind's
// objects. An empty Schema is (nil, nil): the kind has no schema. A schema
// a CRD could not have (not structural, a default that does not validate
// or is not pruned, a CEL rule that does not compile or exceeds the
// static cost limits, ...) is an error wrapping ErrInvalidSchema that
// names the kind and lists every problem with its path in the schema.
func New(ctx context.Context, info *resource.Info) (*Check, error) {
	if info.Schema == "" {
		return nil, nil
	}
	crd, err := definition(info)
	if err != nil {
		return nil, err
	}
	if errs := crdvalidation.ValidateCustomResourceDefinition(ctx, crd); len(errs) > 0 {
		return nil, fmt.Errorf("%w of kind %s (%s): %v", ErrInvalidSchema, info.Kind, info.GroupResource(), errs.ToAggregate())
	}
	props := crd.Spec.Validation.OpenAPIV3Schema
	s, err := structuralschema.NewStructural(props)
	if err != nil { // the CRD checks make this unreachable
		return nil, fmt.Errorf("%w of kind %s (%s): %v", ErrInvalidSchema, info.Kind, info.GroupResource(), err)
	}
	// Like kube-apiserver: it does not own s's defaults, so copy, then
	// drop from the defaults what pruning would drop.
	s = s.DeepCopy()
	if err := structuraldefaulting.PruneDefaults(s); err != nil {
		return nil, fmt.Errorf("%w of kind %s (%s): %v", ErrInvalidSchema, info.Kind, info.GroupResource(), err)
	}
	c := &Check{structural: s, hasDefaults: hasDefaults(s)}
	if c.schema, _, err = apiservervalidation.NewSchemaValidator(props); err != nil {
		return nil, fmt.Errorf("%w of kind %s (%s): %v", ErrInvalidSchema, info.Kind, info.GroupResource(), err)
	}
	if status, ok := props.Properties["status"]; ok && info.HasStatus {
		if c.status, _, err = apiservervalidation.NewSchemaValidator(&status); err != nil {
			return nil, fmt.Errorf("%w of kind %s (%s): %v", ErrInvalidSchema, info.Kind, info.GroupResource(), err)
		}
	}
	// Compiled once here; the CRD strategy does the same at start.
	c.cel = cel.NewValidator(s, true, celconfig.PerCallLimit)
	return c, nil
}

// definition is the CRD kube-apiserver would be given for info: one served
// storage version whose openAPIV3Schema is info.Schema, with info's names,
// scope and status subresource, defaulted and converted to the internal
// version exactly as kube-apiserver does before validating a CRD. The
// schema must be one JSON object with no unknown or duplicate field.
func definition(info *resource.Info) (*apiextensions.CustomResourceDefinition, error) {
	var props apiextensionsv1.JSONSchemaProps
	strict, err := kjson.UnmarshalStrict([]byte(info.Schema), &props)
	if err == nil && len(strict) > 0 {
		err = errors.Join(strict...)
	}
	if err != nil {
		return nil, fmt.Errorf("%w of kind %s (%s): not a JSONSchemaProps: %v", ErrInvalidSchema, info.Kind, info.GroupResource(), err)
	}
	scope := apiextensionsv1.ClusterScoped
	if info.Namespaced {
		scope = apiextensionsv1.NamespaceScoped
	}
	version := apiextensionsv1.CustomResourceDefinitionVersion{
		Name:    info.Version,
		Served:  true,
		Storage: true,
		Schema:  &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &props},
	}
	if info.HasStatus {
		version.Subresources = &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}}
	}
	v1crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: info.Plural + "." + info.Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: info.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Plural:     info.Plural,
				Singular:   info.Singular,
				Kind:       info.Kind,
				ListKind:   info.ListKind,
				ShortNames: info.ShortNames,
				Categories: info.Categories,
			},
			Scope:    scope,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{version},
		},
	}
	if isProtectedGroup(info.Group) {
		// A CRD of a *.k8s.io group needs this annotation; the kind's
		// schema is what is checked here, not who may publish the group.
		v1crd.Annotations = map[string]string{apiextensionsv1.KubeAPIApprovedAnnotation: "unapproved, apiloom kind"}
	}
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(v1crd)
	crd := &apiextensions.CustomResourceDefinition{}
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(v1crd, crd, nil); err != nil {
		return nil, fmt.Errorf("%w of kind %s (%s): %v", ErrInvalidSchema, info.Kind, info.GroupResource(), err)
	}
	return crd, nil
}

// isProtectedGroup reports whether group is one whose CRDs need API
// approval in kube-apiserver.
func isProtectedGroup(group string) bool {
	return group == "k8s.io" || strings.HasSuffix(group, ".k8s.io") ||
		group == "kubernetes.io" || strings.HasSuffix(group, ".kubernetes.io")
}

// hasDefaults reports whether any node of s carries a default.
func hasDefaults(s *structuralschema.Structural) bool {
	if s == nil {
		return false
	}
	if s.Default.Object != nil {
		return true
	}
	if s.Items != nil && hasDefaults(s.Items) {
		return true
	}
	if s.AdditionalProperties != nil && hasDefaults(s.AdditionalProperties.Structural) {
		return true
	}
	for _, p := range s.Properties {
		if hasDefaults(&p) {
			return true
		}
	}
	return false
}

// HasDefaults reports whether the schema defaults any field: Default
// changes nothing when it does not.
func (c *Check) HasDefaults() bool { return c.hasDefaults }

// Default sets, in obj, the schema's default of every absent field whose
// parent is present, as kube-apiserver defaults a custom resource when it
// decodes a request body or reads from storage. Nulls are kept: typed
// objects, decoded into Go types, have none the schema does not allow.
func (c *Check) Default(obj map[string]any) {
	if c.hasDefaults {
		structuraldefaulting.Default(obj, c.structural)
	}
}

// Decoded does to obj, the unstructured content of an object a request
// sends (a create or update body, the result of a patch), what
// kube-apiserver does to a custom resource's content when it decodes a
// request, in the same order: fields the schema does not declare are
// pruned, nulls of non-nullable fields without a default dropped, the
// metadata of embedded resources coerced (malformed fields dropped), and
// the defaults set. The object's own metadata is left to the caller, which
// replaces it with the typed object's.
func (c *Check) Decoded(obj map[string]any) {
	structuralpruning.Prune(obj, c.structural, true)
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, c.structural)
	// With dropInvalidFields, Coerce drops what it cannot coerce and
	// reports nothing.
	_ = schemaobjectmeta.Coerce(nil, obj, c.structural, false, true)
	c.Default(obj)
}
