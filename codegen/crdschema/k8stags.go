package crdschema

import (
	"encoding/json"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdmarkers "sigs.k8s.io/controller-tools/pkg/crd/markers"
	"sigs.k8s.io/controller-tools/pkg/markers"
)

// Kubernetes' declarative validation tags (k8s.io/code-generator's
// validation-gen) that controller-tools v0.23.0 does not register itself,
// mapped onto the schema constraint a CRD expresses the same rule with.
// controller-tools already knows k8s:required, k8s:optional, k8s:enum
// (on a string type with its constants), k8s:immutable, k8s:listType,
// k8s:listMapKey, and, on fields, k8s:minimum, k8s:maximum and
// k8s:maxItems. Tags with no schema equivalent (k8s:forbidden,
// k8s:unionMember, k8s:ifEnabled...) stay unknown, so they fail generation
// rather than validate nothing.

// k8sAliases are the tags that mean exactly a kubebuilder validation
// marker; they reuse its type, so they check their field's type the same
// way. Each is registered for fields and types.
var k8sAliases = map[string]any{
	"k8s:minimum":       crdmarkers.Minimum(0),
	"k8s:maximum":       crdmarkers.Maximum(0),
	"k8s:minLength":     crdmarkers.MinLength(0),
	"k8s:maxLength":     crdmarkers.MaxLength(0),
	"k8s:minItems":      crdmarkers.MinItems(0),
	"k8s:maxItems":      crdmarkers.MaxItems(0),
	"k8s:minProperties": crdmarkers.MinProperties(0),
	"k8s:maxProperties": crdmarkers.MaxProperties(0),
	"k8s:format":        K8sFormat(""),
	"k8s:maxBytes":      K8sMaxBytes(0),
	"k8s:neq":           K8sNeq{},
}

// k8sTagDefinitions are the definitions of k8sAliases that controller-tools
// has not registered (it has some of them for fields).
func k8sTagDefinitions() []*markers.Definition {
	builtin := map[string]bool{"k8s:minimum": true, "k8s:maximum": true, "k8s:maxItems": true}
	var out []*markers.Definition
	for _, name := range sortedKeys(k8sAliases) {
		for _, target := range []markers.TargetType{markers.DescribesField, markers.DescribesType} {
			if target == markers.DescribesField && builtin[name] {
				continue
			}
			var (
				def *markers.Definition
				err error
			)
			if _, anyValue := k8sAliases[name].(K8sNeq); anyValue {
				def, err = markers.MakeAnyTypeDefinition(name, target, k8sAliases[name])
			} else {
				def, err = markers.MakeDefinition(name, target, k8sAliases[name])
			}
			if err != nil {
				panic(fmt.Sprintf("crdschema: +%s: %v", name, err)) // a programming error
			}
			out = append(out, def)
		}
	}
	return out
}

// K8sFormat is +k8s:format=<name>: a string in one of Kubernetes' formats.
// CRD schemas know none of them as "format", so each becomes the CEL rule
// of the Kubernetes CEL library's equivalent (the format library's
// validate, or isIP).
type K8sFormat string

// k8sFormatRules maps validation-gen's format names to the CEL format
// library's and the longest string the format admits; formats with no
// equivalent are refused. The length becomes maxLength (unless a smaller
// one is set): it changes nothing that is valid, and without it
// kube-apiserver's static CEL cost estimate refuses the rule.
var k8sFormatRules = map[string]struct {
	lib    string
	maxLen int64
}{
	"k8s-short-name":                    {"dns1123Label", 63},
	"k8s-long-name":                     {"dns1123Subdomain", 253},
	"k8s-label-value":                   {"labelValue", 63},
	"k8s-label-key":                     {"qualifiedName", 253 + 1 + 63},
	"k8s-prefixed-label-key":            {"qualifiedName", 253 + 1 + 63},
	"k8s-uuid":                          {"uuid", 36},
	"k8s-path-segment-name":             {},
	"k8s-long-name-caseless":            {},
	"k8s-resource-pool-name":            {},
	"k8s-extended-resource-name":        {},
	"k8s-resource-fully-qualified-name": {},
}

// ApplyToSchema adds the format's CEL rule.
func (f K8sFormat) ApplyToSchema(_ *crdmarkers.SchemaContext, s *apiextensionsv1.JSONSchemaProps) error {
	if s.Type != "string" {
		return fmt.Errorf("k8s:format applies to strings, found %q", s.Type)
	}
	if f == "k8s-ip" {
		s.XValidations = append(s.XValidations, apiextensionsv1.ValidationRule{
			Rule: "isIP(self)", Message: "must be a valid IP address",
		})
		return nil
	}
	r, ok := k8sFormatRules[string(f)]
	if !ok {
		return fmt.Errorf("k8s:format=%s: not a format validation-gen knows", f)
	}
	if r.lib == "" {
		return fmt.Errorf("k8s:format=%s: no CRD schema equivalent yet", f)
	}
	if s.MaxLength == nil || *s.MaxLength > r.maxLen {
		s.MaxLength = &r.maxLen
	}
	call := fmt.Sprintf("format.%s().validate(self)", r.lib)
	// A static message: the library's own (a messageExpression joining
	// validate's list) is over kube-apiserver's estimated cost budget.
	s.XValidations = append(s.XValidations, apiextensionsv1.ValidationRule{
		Rule:    "!" + call + ".hasValue()",
		Message: fmt.Sprintf("must be a valid %s (%s)", r.lib, f),
	})
	return nil
}

// K8sMaxBytes is +k8s:maxBytes=N: at most N bytes of UTF-8 (maxLength
// counts characters), as a CEL rule.
type K8sMaxBytes int

// ApplyToSchema adds the size rule.
func (n K8sMaxBytes) ApplyToSchema(_ *crdmarkers.SchemaContext, s *apiextensionsv1.JSONSchemaProps) error {
	if s.Type != "string" {
		return fmt.Errorf("k8s:maxBytes applies to strings, found %q", s.Type)
	}
	s.XValidations = append(s.XValidations, apiextensionsv1.ValidationRule{
		Rule:    fmt.Sprintf("size(bytes(self)) <= %d", n),
		Message: fmt.Sprintf("must be no more than %d bytes", n),
	})
	return nil
}

// K8sNeq is +k8s:neq=<value>: the value is forbidden, as a CEL rule.
type K8sNeq struct{ Value any }

// ApplyToSchema adds the inequality rule.
func (n K8sNeq) ApplyToSchema(_ *crdmarkers.SchemaContext, s *apiextensionsv1.JSONSchemaProps) error {
	lit, err := json.Marshal(n.Value)
	if err != nil {
		return fmt.Errorf("k8s:neq: %w", err)
	}
	s.XValidations = append(s.XValidations, apiextensionsv1.ValidationRule{
		Rule:    fmt.Sprintf("self != %s", lit),
		Message: fmt.Sprintf("must not be equal to %s", lit),
	})
	return nil
}
