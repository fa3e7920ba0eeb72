package crdschema

import (
	"encoding/json"
	"reflect"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestK8sTags: each declarative validation tag becomes its schema
// constraint, and kube-apiserver accepts the result as a CRD (Generate
// checks; the CEL rules compile in the CRD environment).
func TestK8sTags(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "k8stags.test.apiloom.dev", Version: "v1", Kind: "Thing"}
	out, err := Generate([]string{"./testdata/k8stags/v1"}, []schema.GroupVersionKind{gvk})
	if err != nil {
		t.Fatal(err)
	}
	var root apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal([]byte(out[gvk]), &root); err != nil {
		t.Fatal(err)
	}
	spec := root.Properties["spec"]
	p := func(name string) apiextensionsv1.JSONSchemaProps { return spec.Properties[name] }
	i64 := func(n int64) *int64 { return &n }
	f64 := func(n float64) *float64 { return &n }
	rule := func(name string) []apiextensionsv1.ValidationRule { return p(name).XValidations }
	checks := []struct {
		what      string
		got, want any
	}{
		{"count minimum", p("count").Minimum, f64(1)},
		{"count maximum", p("count").Maximum, f64(9)},
		{"short minLength", p("short").MinLength, i64(2)},
		{"short maxLength", p("short").MaxLength, i64(8)},
		{"items minItems", p("items").MinItems, i64(1)},
		{"items maxItems", p("items").MaxItems, i64(3)},
		{"items list type", *p("items").XListType, "set"},
		{"props minProperties", p("props").MinProperties, i64(1)},
		{"props maxProperties", p("props").MaxProperties, i64(2)},
		{"label rule", rule("label")[0].Rule, "!format.dns1123Label().validate(self).hasValue()"},
		{"host rule", rule("host")[0].Rule, "!format.dns1123Subdomain().validate(self).hasValue()"},
		{"value rule", rule("value")[0].Rule, "!format.labelValue().validate(self).hasValue()"},
		{"id rule", rule("id")[0].Rule, "!format.uuid().validate(self).hasValue()"},
		{"ip rule", rule("ip")[0].Rule, "isIP(self)"},
		{"bytes rule", rule("bytes")[0].Rule, "size(bytes(self)) <= 16"},
		{"neq rule", rule("notNone")[0].Rule, `self != "none"`},
		{"immutable", rule("fixed")[0], apiextensionsv1.ValidationRule{Rule: "self == oldSelf", Message: "field is immutable"}},
		{"required minLength", p("must").MinLength, i64(1)},
		{"mode enum", len(p("mode").Enum), 2},
		{"type-level maxLength", p("name").MaxLength, i64(10)},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.what, c.got, c.want)
		}
	}
}
