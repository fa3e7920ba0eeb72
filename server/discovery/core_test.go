package discovery_test

import (
	"net/http"
	"slices"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/resource"
)

// coreWidget is widgetV1 in the core group (""), served under /api/v1 as
// kube-apiserver serves ConfigMaps.
func coreWidget() *resource.Info {
	w := widgetV1()
	w.Group = ""
	return w
}

// TestCoreGroup: a core-group resource is described under /api and
// /api/v1, in both discovery forms, and not under /apis; client-go's
// discovery finds it with groupVersion "v1".
func TestCoreGroup(t *testing.T) {
	ts := newTestServer(t, []*resource.Info{coreWidget(), gadgetV1()}, testDefinitions)

	var versions metav1.APIVersions
	readJSON(t, ts.get(t, "/api", "application/json", ""), &versions)
	if !slices.Equal(versions.Versions, []string{"v1"}) {
		t.Errorf("/api versions = %v, want [v1]", versions.Versions)
	}

	var list metav1.APIResourceList
	readJSON(t, ts.get(t, "/api/v1", "application/json", ""), &list)
	if list.GroupVersion != "v1" || len(list.APIResources) == 0 || list.APIResources[0].Name != "widgets" {
		t.Errorf("/api/v1 = %+v, want groupVersion v1 with widgets", list)
	}

	var agg apidiscoveryv2.APIGroupDiscoveryList
	readJSON(t, ts.get(t, "/api", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", ""), &agg)
	if len(agg.Items) != 1 || agg.Items[0].Name != "" || agg.Items[0].Versions[0].Resources[0].Resource != "widgets" {
		t.Errorf("aggregated /api = %+v, want the core group with widgets", agg.Items)
	}
	var aggAPIs apidiscoveryv2.APIGroupDiscoveryList
	readJSON(t, ts.get(t, "/apis", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", ""), &aggAPIs)
	for _, g := range aggAPIs.Items {
		if g.Name == "" {
			t.Errorf("aggregated /apis lists the core group")
		}
	}

	if resp := ts.get(t, "/openapi/v3/api/v1", "application/json", ""); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /openapi/v3/api/v1: %s", resp.Status)
	}

	dc := ts.discoveryClient(t)
	rl, err := dc.ServerResourcesForGroupVersion("v1")
	if err != nil {
		t.Fatal(err)
	}
	if rl.GroupVersion != "v1" || rl.APIResources[0].Name != "widgets" {
		t.Errorf("client-go: %+v", rl)
	}
	_, all, err := dc.ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, l := range all {
		if l.GroupVersion == "v1" {
			found = slices.ContainsFunc(l.APIResources, func(r metav1.APIResource) bool { return r.Name == "widgets" })
		}
	}
	if !found {
		t.Errorf("client-go's aggregated discovery lacks v1 widgets: %+v", all)
	}
}
