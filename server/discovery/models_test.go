package discovery_test

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/common"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/apiloom/apiloom/server/discovery"
)

// TestModels builds a server-side apply type converter from Models, as
// the registry does, and checks that it knows every kind by its
// group-version-kind and merges lists as their OpenAPI extensions say.
func TestModels(t *testing.T) {
	// Widget v1's conditions become a +listType=map keyed by type, as
	// openapi-gen records the markers.
	defs := func(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
		all := testDefinitions(ref)
		st := all[pkgV1+".WidgetStatus"]
		cond := st.Schema.Properties["conditions"]
		cond.AddExtension("x-kubernetes-list-type", "map")
		cond.AddExtension("x-kubernetes-list-map-keys", []any{"type"})
		st.Schema.Properties["conditions"] = cond
		all[pkgV1+".WidgetStatus"] = st
		return all
	}
	models, err := discovery.Models(testInfos(), defs)
	if err != nil {
		t.Fatal(err)
	}
	if s := models["com.github.apiloom.apiloom.server.discovery.testapi.v1.Widget"]; s == nil || s.Extensions["x-kubernetes-group-version-kind"] == nil {
		t.Fatalf("Widget's schema %v lacks its group-version-kind", s)
	}
	tc, err := managedfields.NewTypeConverter(models, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range testInfos() {
		for _, kind := range []string{info.Kind, info.ListKind} {
			u := &unstructured.Unstructured{Object: map[string]any{}}
			u.SetAPIVersion(info.GroupVersion().String())
			u.SetKind(kind)
			if _, err := tc.ObjectToTyped(u); err != nil {
				t.Errorf("%s %s: %v", info.GroupVersion(), kind, err)
			}
		}
	}

	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group + "/v1", "kind": "Widget",
		"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}},
	}}
	typed, err := tc.ObjectToTyped(u)
	if err != nil {
		t.Fatal(err)
	}
	set, err := typed.ToFieldSet()
	if err != nil {
		t.Fatal(err)
	}
	// A map list's items are keyed by their key fields, not by index.
	want := fieldpath.MakePathOrDie("status", "conditions", fieldpath.KeyByFields("type", "Ready"), "status")
	if !set.Has(want) {
		t.Errorf("field set %s lacks %s", set, want)
	}
}

func TestModelsMissingDefinitions(t *testing.T) {
	if _, err := discovery.Models(testInfos(), nil); !errors.Is(err, discovery.ErrMissingDefinition) {
		t.Errorf("nil definitions: %v", err)
	}
	without := func(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
		all := testDefinitions(ref)
		delete(all, pkgV1+".Gadget")
		return all
	}
	if _, err := discovery.Models(testInfos(), without); !errors.Is(err, discovery.ErrMissingDefinition) {
		t.Errorf("no Gadget: %v", err)
	}
}
