package discovery_test

import (
	"maps"
	"slices"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kube-openapi/pkg/common"

	"github.com/apiloom/apiloom/server/resource"
)

// probeV1 is a create-only kind, as a review is: Gadget's definition, no
// list kind, namespaced so that its one path has the namespace parameter.
func probeV1() *resource.Info {
	return &resource.Info{
		Group: group, Version: "v1", Kind: "Gadget", Plural: "probes", Singular: "probe",
		Namespaced: true, CreateOnly: true, OpenAPIName: pkgV1 + ".Gadget",
	}
}

// TestCreateOnly: a create-only kind is listed with verbs [create] and no
// storage version hash in both discovery forms, needs no list definition,
// and has one path in OpenAPI v3 and v2, a POST on its collection, as
// kube-apiserver publishes SelfSubjectAccessReview and the other reviews.
func TestCreateOnly(t *testing.T) {
	noList := func(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
		defs := testDefinitions(ref)
		delete(defs, pkgV1+".GadgetList")
		return defs
	}
	ts := newTestServer(t, []*resource.Info{probeV1()}, noList)

	var list metav1.APIResourceList
	readJSON(t, ts.get(t, "/apis/"+group+"/v1", "application/json", ""), &list)
	if len(list.APIResources) != 1 {
		t.Fatalf("resources %+v", list.APIResources)
	}
	if r := list.APIResources[0]; r.Name != "probes" || !slices.Equal(r.Verbs, metav1.Verbs{"create"}) || r.StorageVersionHash != "" || !r.Namespaced {
		t.Errorf("legacy discovery: %+v", r)
	}

	var agg apidiscoveryv2.APIGroupDiscoveryList
	readJSON(t, ts.get(t, "/apis", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", ""), &agg)
	r := agg.Items[0].Versions[0].Resources[0]
	if r.Resource != "probes" || !slices.Equal(r.Verbs, []string{"create"}) || r.Scope != apidiscoveryv2.ScopeNamespace || len(r.Subresources) != 0 {
		t.Errorf("aggregated discovery: %+v", r)
	}

	doc := gvSpec(t, ts, widgetGVK.GroupVersion())
	const path = "/apis/test.apiloom.dev/v1/namespaces/{namespace}/probes"
	if got := slices.Sorted(maps.Keys(doc.Paths.Paths)); !slices.Equal(got, []string{path}) {
		t.Fatalf("v3 paths %v, want [%s]", got, path)
	}
	p := doc.Paths.Paths[path]
	if p.Post == nil || p.Get != nil || p.Put != nil || p.Patch != nil || p.Delete != nil {
		t.Errorf("v3 operations of %s: %+v", path, p)
	} else if p.Post.OperationId != "createTestApiloomDevV1NamespacedGadget" {
		t.Errorf("v3 operationId %q", p.Post.OperationId)
	}

	v2, err := ts.discoveryClient(t).OpenAPISchema()
	if err != nil {
		t.Fatal(err)
	}
	var v2Paths []string
	for _, p := range v2.GetPaths().GetPath() {
		v2Paths = append(v2Paths, p.GetName())
		if v := p.GetValue(); v.GetPost() == nil || v.GetGet() != nil || v.GetDelete() != nil {
			t.Errorf("v2 operations of %s: %v", p.GetName(), v)
		}
	}
	if !slices.Equal(v2Paths, []string{path}) {
		t.Errorf("v2 paths %v, want [%s]", v2Paths, path)
	}
}
