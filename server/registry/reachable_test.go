package registry

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/apiloom/apiloom/generated/openapi"
)

// chainDefs is A -> B -> C -> A (a cycle) plus D, which nothing refers to.
func chainDefs(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	def := func(dep string) common.OpenAPIDefinition {
		return common.OpenAPIDefinition{
			Schema:       spec.Schema{SchemaProps: spec.SchemaProps{Properties: map[string]spec.Schema{"next": {SchemaProps: spec.SchemaProps{Ref: ref(dep)}}}}},
			Dependencies: []string{dep},
		}
	}
	return map[string]common.OpenAPIDefinition{"A": def("B"), "B": def("C"), "C": def("A"), "D": def("A")}
}

// TestReachableDefinitionsKeepsTheClosure: the roots and what they depend
// on, through a cycle, and nothing else; a missing root is left out, and
// the caller's ref callback still makes the refs.
func TestReachableDefinitionsKeepsTheClosure(t *testing.T) {
	defs := reachableDefinitions(chainDefs, []string{"B", "missing"})
	got := defs(func(key string) spec.Ref { return spec.MustCreateRef("#/x/" + key) })
	if keys := slices.Sorted(maps.Keys(got)); !slices.Equal(keys, []string{"A", "B", "C"}) {
		t.Fatalf("kept %v, want [A B C]", keys)
	}
	if next := got["A"].Schema.Properties["next"]; next.Ref.String() != "#/x/B" {
		t.Fatalf("ref %q, want the caller's #/x/B", next.Ref.String())
	}
	if reachableDefinitions(nil, []string{"A"}) != nil {
		t.Fatal("nil definitions must stay nil")
	}
}

// TestReachableDefinitionsRefsStayInside: in the generated definitions,
// every $ref of a kept definition names a kept one, so strategic merge
// patch, which follows refs through the kept schemas alone, finds every
// schema it found in the whole map; and types no root refers to (Pod) are
// dropped.
func TestReachableDefinitionsRefsStayInside(t *testing.T) {
	const prefix = "#/components/schemas/"
	roots := []string{
		corev1.ConfigMap{}.OpenAPIModelName(), corev1.Namespace{}.OpenAPIModelName(),
		corev1.Event{}.OpenAPIModelName(), corev1.ServiceAccount{}.OpenAPIModelName(),
		rbacv1.ClusterRole{}.OpenAPIModelName(),
	}
	ref := func(key string) spec.Ref { return spec.MustCreateRef(prefix + key) }
	all := openapi.GetOpenAPIDefinitions(ref)
	kept := reachableDefinitions(openapi.GetOpenAPIDefinitions, roots)(ref)
	for _, root := range roots {
		if _, ok := kept[root]; !ok {
			t.Errorf("root %s dropped", root)
		}
	}
	if _, ok := kept[corev1.Pod{}.OpenAPIModelName()]; ok {
		t.Error("Pod kept, though no root refers to it")
	}
	if len(kept) >= len(all) {
		t.Fatalf("kept %d of %d definitions", len(kept), len(all))
	}
	for key, d := range kept {
		b, err := json.Marshal(d.Schema)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		for _, r := range refs(doc) {
			if _, ok := kept[strings.TrimPrefix(r, prefix)]; !ok {
				t.Errorf("%s refers to %s, which was dropped", key, r)
			}
		}
	}
	t.Logf("kept %d of %d definitions", len(kept), len(all))
}

// refs are the $ref values anywhere in a decoded JSON document.
func refs(v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok && k == "$ref" {
				out = append(out, s)
				continue
			}
			out = append(out, refs(e)...)
		}
	case []any:
		for _, e := range v {
			out = append(out, refs(e)...)
		}
	}
	return out
}
