package registry

import (
	"reflect"
	"testing"

	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// listDefs has one definition whose properties are lists as openapi-gen
// writes them from +listType, +listMapKey and patchStrategy markers.
func listDefs(common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	list := func(ext spec.Extensions) spec.Schema {
		return spec.Schema{VendorExtensible: spec.VendorExtensible{Extensions: ext}, SchemaProps: spec.SchemaProps{Type: []string{"array"}}}
	}
	return map[string]common.OpenAPIDefinition{
		"example.com/v1.Spec": {Schema: spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: map[string]spec.Schema{
			"byName":      list(spec.Extensions{extListType: "map", extListMapKeys: []any{"name"}}),
			"byNameTyped": list(spec.Extensions{extListType: "map", extListMapKeys: []string{"name"}}),
			"byTwoKeys":   list(spec.Extensions{extListType: "map", extListMapKeys: []any{"name", "zone"}}),
			"tagged":      list(spec.Extensions{extListType: "map", extListMapKeys: []any{"name"}, extPatchStrategy: "merge", extPatchMergeKey: "id"}),
			"replaced":    list(spec.Extensions{extListType: "map", extListMapKeys: []any{"name"}, extPatchStrategy: "replace"}),
			"set":         list(spec.Extensions{extListType: "set"}),
			"atomic":      list(spec.Extensions{extListType: "atomic"}),
			"plain":       list(nil),
			"scalar":      *spec.StringProperty(),
		}}}},
		"example.com/v1.Other": {Schema: *spec.StringProperty()},
	}
}

func TestListMapMerge(t *testing.T) {
	r := &Registry{}
	r.SetOpenAPIDefinitions(listDefs)
	got := r.OpenAPIDefinitions()(nil)["example.com/v1.Spec"].Schema.Properties
	want := listDefs(nil)["example.com/v1.Spec"].Schema.Properties
	for _, name := range []string{"byName", "byNameTyped"} {
		if ext := got[name].Extensions; ext[extPatchStrategy] != "merge" || ext[extPatchMergeKey] != "name" {
			t.Errorf("%s: %v, want patch strategy merge by name", name, ext)
		}
		delete(got, name)
		delete(want, name)
	}
	// Several keys (strategic merge patch takes one), an explicit
	// strategy, and every other list stay as openapi-gen wrote them.
	if !reflect.DeepEqual(got, want) {
		t.Errorf("other properties changed:\n got %v\nwant %v", got, want)
	}
	if d := r.OpenAPIDefinitions()(nil)["example.com/v1.Other"]; !reflect.DeepEqual(d, listDefs(nil)["example.com/v1.Other"]) {
		t.Errorf("a definition without lists changed: %v", d)
	}
	if (&Registry{}).OpenAPIDefinitions() != nil {
		t.Error("no definitions became some")
	}
}
