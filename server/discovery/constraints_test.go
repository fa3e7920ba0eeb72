package discovery_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/util/proto"
	"k8s.io/kube-openapi/pkg/util/proto/validation"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/apiloom/apiloom/server/discovery"
	"github.com/apiloom/apiloom/server/resource"
)

// Component names of the test API's shared structs.
const (
	widgetSpecSchema = "com.github.apiloom.apiloom.server.discovery.testapi.v1.WidgetSpec"
	gadgetSpecSchema = "com.github.apiloom.apiloom.server.discovery.testapi.v1.GadgetSpec"
	conditionSchema  = "io.k8s.apimachinery.pkg.apis.meta.v1.Condition"
)

// widgetSpecJSON is WidgetSpec as controller-gen inlines it, with its
// fields' markers; rule is a CEL rule on the field that refers to it.
func widgetSpecJSON(rule string, colors string) string {
	return `{"type":"object","required":["color"],
	 "x-kubernetes-validations":[{"rule":"` + rule + `"}],
	 "properties":{
	  "color":{"type":"string","description":"Color is the widget's color.","enum":[` + colors + `],"pattern":"^[a-z]+$"},
	  "size":{"type":"integer","format":"int32","minimum":1,"maximum":9,"default":3,"nullable":true}}}`
}

// constrainedInfos are the test API with schemas: Widget v1 refers to
// WidgetSpec from .spec, and Gadget to the same WidgetSpec from
// .spec.widget, each field with its own CEL rule; Widget's conditions carry
// metav1.Condition's markers.
func constrainedInfos(gadgetColors string) []*resource.Info {
	w, g := widgetV1(), gadgetV1()
	w.Schema = `{"type":"object","x-kubernetes-validations":[{"rule":"self.metadata.name != 'x'"}],"properties":{
	 "apiVersion":{"type":"string"},"kind":{"type":"string"},"metadata":{"type":"object"},
	 "spec":` + widgetSpecJSON("widget rule", `"red","blue"`) + `,
	 "status":{"type":"object","properties":{"phase":{"type":"string"},
	  "conditions":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["type"],
	   "items":{"type":"object","required":["type","status"],"properties":{
	    "type":{"type":"string","maxLength":316},"status":{"type":"string","enum":["True","False","Unknown"]},
	    "lastTransitionTime":{"type":"string","format":"date-time"}}}}}}}}`
	g.Schema = `{"type":"object","properties":{"spec":{"type":"object","properties":{
	 "label":{"type":"string","maxLength":8},
	 "widget":` + widgetSpecJSON("gadget rule", gadgetColors) + `}}}}`
	return []*resource.Info{w, g, widgetV1beta1(), thingV1alpha1()}
}

// constrainedDefinitions adds to the test definitions GadgetSpec.widget, a
// second field of type WidgetSpec, and the list type openapi-gen records.
func constrainedDefinitions(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	all := testDefinitions(ref)
	gs := all[pkgV1+".GadgetSpec"]
	gs.Schema.Properties["widget"] = spec.Schema{SchemaProps: spec.SchemaProps{
		Description: "Widget is a spare one.", Default: map[string]any{}, Ref: ref(pkgV1 + ".WidgetSpec")}}
	gs.Dependencies = append(gs.Dependencies, pkgV1+".WidgetSpec")
	all[pkgV1+".GadgetSpec"] = gs
	st := all[pkgV1+".WidgetStatus"]
	cond := st.Schema.Properties["conditions"]
	cond.AddExtension("x-kubernetes-list-type", "map")
	cond.AddExtension("x-kubernetes-list-map-keys", []any{"type"})
	cond.AddExtension("x-kubernetes-patch-strategy", "merge")
	cond.AddExtension("x-kubernetes-patch-merge-key", "type")
	st.Schema.Properties["conditions"] = cond
	all[pkgV1+".WidgetStatus"] = st
	return all
}

// getJSON decodes the JSON document at path.
func getJSON(t *testing.T, ts *testServer, path string) map[string]any {
	t.Helper()
	resp := ts.get(t, path, "application/json", "")
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %v", path, resp.Status, err)
	}
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// at walks v by keys.
func at(v any, keys ...string) any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

func TestOpenAPIConstraintsV3(t *testing.T) {
	ts := newTestServer(t, constrainedInfos(`"red","blue"`), constrainedDefinitions)
	schemas := at(getJSON(t, ts, "/openapi/v3/apis/"+group+"/v1"), "components", "schemas")
	widget, widgetSpec := at(schemas, widgetSchema), at(schemas, widgetSpecSchema)

	// The struct's own fields' constraints are in the shared definition.
	color := at(widgetSpec, "properties", "color")
	for k, want := range map[string]any{
		"enum": []any{"red", "blue"}, "pattern": "^[a-z]+$", "type": "string",
		"description": "Color is the widget's color.",
	} {
		if got := at(color, k); !reflect.DeepEqual(got, want) {
			t.Errorf("WidgetSpec.color %s = %v, want %v", k, got, want)
		}
	}
	size := at(widgetSpec, "properties", "size")
	for k, want := range map[string]any{"minimum": 1.0, "maximum": 9.0, "default": 3.0, "nullable": true, "format": "int32"} {
		if got := at(size, k); !reflect.DeepEqual(got, want) {
			t.Errorf("WidgetSpec.size %s = %v, want %v", k, got, want)
		}
	}
	if got := at(widgetSpec, "required"); !reflect.DeepEqual(got, []any{"color"}) {
		t.Errorf("WidgetSpec required = %v", got)
	}
	// The fields' rules are at the fields, beside the ref, each its own;
	// the shared definition has neither.
	if got := at(widgetSpec, "x-kubernetes-validations"); got != nil {
		t.Errorf("shared WidgetSpec got a field's rule: %v", got)
	}
	spec := at(widget, "properties", "spec")
	if got := at(spec, "x-kubernetes-validations"); !reflect.DeepEqual(got, []any{map[string]any{"rule": "widget rule"}}) {
		t.Errorf("Widget .spec rules = %v", got)
	}
	if got := at(spec, "allOf"); !reflect.DeepEqual(got, []any{map[string]any{"$ref": "#/components/schemas/" + widgetSpecSchema}}) {
		t.Errorf("Widget .spec allOf = %v", got)
	}
	gadgetWidget := at(schemas, gadgetSpecSchema, "properties", "widget")
	if got := at(gadgetWidget, "x-kubernetes-validations"); !reflect.DeepEqual(got, []any{map[string]any{"rule": "gadget rule"}}) {
		t.Errorf("Gadget .spec.widget rules = %v", got)
	}
	if got := at(at(schemas, gadgetSpecSchema, "properties", "label"), "maxLength"); got != 8.0 {
		t.Errorf("GadgetSpec.label maxLength = %v", got)
	}
	// The kind's root rule is on the kind; metadata stays ObjectMeta.
	if got := at(widget, "x-kubernetes-validations"); !reflect.DeepEqual(got, []any{map[string]any{"rule": "self.metadata.name != 'x'"}}) {
		t.Errorf("Widget rules = %v", got)
	}
	if got := at(widget, "properties", "metadata", "allOf"); !reflect.DeepEqual(got, []any{map[string]any{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}}) {
		t.Errorf("Widget metadata = %v", at(widget, "properties", "metadata"))
	}
	// metav1.Condition's markers reach its definition; openapi-gen's
	// strategic merge patch and list extensions stay; an opaque type
	// (Time) is inlined as a CRD has it.
	cond := at(schemas, conditionSchema)
	if got := at(cond, "properties", "type", "maxLength"); got != 316.0 {
		t.Errorf("Condition.type maxLength = %v", got)
	}
	if got := at(cond, "properties", "lastTransitionTime"); at(got, "format") != "date-time" || at(got, "allOf") != nil {
		t.Errorf("Condition.lastTransitionTime = %v", got)
	}
	conds := at(schemas, "com.github.apiloom.apiloom.server.discovery.testapi.v1.WidgetStatus", "properties", "conditions")
	for k, want := range map[string]any{"x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": "type", "x-kubernetes-list-type": "map"} {
		if got := at(conds, k); got != want {
			t.Errorf("WidgetStatus.conditions %s = %v, want %v", k, got, want)
		}
	}
}

// TestOpenAPIConstraintsV2: OpenAPI v2 as kube-apiserver publishes a CRD's
// for kubectl: no defaults, and a nullable field without a type.
func TestOpenAPIConstraintsV2(t *testing.T) {
	ts := newTestServer(t, constrainedInfos(`"red","blue"`), constrainedDefinitions)
	defs := at(getJSON(t, ts, "/openapi/v2"), "definitions")
	size := at(defs, widgetSpecSchema, "properties", "size")
	want := map[string]any{"description": "Size in centimetres.", "format": "int32", "minimum": 1.0, "maximum": 9.0}
	if !reflect.DeepEqual(size, want) {
		t.Errorf("v2 WidgetSpec.size = %v, want %v", size, want)
	}
	if got := at(defs, widgetSpecSchema, "properties", "color", "enum"); !reflect.DeepEqual(got, []any{"red", "blue"}) {
		t.Errorf("v2 WidgetSpec.color enum = %v", got)
	}
	if got := at(defs, widgetSchema, "properties", "spec", "x-kubernetes-validations"); got == nil {
		t.Errorf("v2 Widget .spec lacks its rule")
	}
	// The v2 document still parses as kubectl's models.
	doc, err := ts.discoveryClient(t).OpenAPISchema()
	if err != nil || doc == nil {
		t.Fatalf("OpenAPISchema: %v", err)
	}
}

// TestOpenAPIConstraintsConflict: two kinds whose schemas disagree on a
// shared struct's fields cannot both be published; New says so rather than
// give one kind the other's constraints.
func TestOpenAPIConstraintsConflict(t *testing.T) {
	_, err := discovery.New(constrainedInfos(`"green"`), constrainedDefinitions, version.Info{})
	if !errors.Is(err, discovery.ErrSchemaConflict) {
		t.Fatalf("New with conflicting schemas: %v, want ErrSchemaConflict", err)
	}
	if _, err := discovery.Models(constrainedInfos(`"green"`), constrainedDefinitions); !errors.Is(err, discovery.ErrSchemaConflict) {
		t.Fatalf("Models with conflicting schemas: %v, want ErrSchemaConflict", err)
	}
}

// TestModelsConstraints: the type converter's models are the /openapi/v3
// schemas, constraints included, and still build a type converter.
func TestModelsConstraints(t *testing.T) {
	models, err := discovery.Models(constrainedInfos(`"red","blue"`), constrainedDefinitions)
	if err != nil {
		t.Fatal(err)
	}
	if got := models[widgetSpecSchema].Properties["color"].Enum; !reflect.DeepEqual(got, []any{"red", "blue"}) {
		t.Errorf("model WidgetSpec.color enum = %v", got)
	}
	if _, err := managedfields.NewTypeConverter(models, false); err != nil {
		t.Fatal(err)
	}
}

// TestClientSideValidationV2: kubectl validates on the client, with
// OpenAPI v2, when the server does not take fieldValidation; the v2
// document must keep that working: a valid object passes (a null in a
// nullable field included, which kube-apiserver's v2 reduction allows), an
// unknown field and a missing required one are caught.
func TestClientSideValidationV2(t *testing.T) {
	ts := newTestServer(t, constrainedInfos(`"red","blue"`), constrainedDefinitions)
	doc, err := ts.discoveryClient(t).OpenAPISchema()
	if err != nil {
		t.Fatal(err)
	}
	models, err := proto.NewOpenAPIData(doc)
	if err != nil {
		t.Fatal(err)
	}
	widget := models.LookupModel(widgetSchema)
	obj := func(spec map[string]any) map[string]any {
		return map[string]any{"apiVersion": group + "/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"}, "spec": spec}
	}
	if errs := validation.ValidateModel(obj(map[string]any{"color": "red", "size": nil}), widget, "Widget"); len(errs) > 0 {
		t.Errorf("valid Widget: %v", errs)
	}
	if errs := validation.ValidateModel(obj(map[string]any{"color": "red", "bogus": 1}), widget, "Widget"); len(errs) == 0 {
		t.Error("unknown field passed client-side validation")
	}
	if errs := validation.ValidateModel(obj(map[string]any{"size": 2}), widget, "Widget"); len(errs) == 0 {
		t.Error("missing required color passed client-side validation")
	}
}
