package discovery_test

import (
	"slices"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/resource"
)

// TestFinalizeSubresource: a kind with a finalize subresource (a
// Namespace's) lists it as kube-apiserver lists namespaces/finalize, verb
// update only, before its status, in both discovery forms.
func TestFinalizeSubresource(t *testing.T) {
	w := coreWidget()
	w.HasStatus, w.HasFinalize = true, true
	ts := newTestServer(t, []*resource.Info{w}, testDefinitions)

	var list metav1.APIResourceList
	readJSON(t, ts.get(t, "/api/v1", "application/json", ""), &list)
	var names []string
	for _, r := range list.APIResources {
		names = append(names, r.Name)
		if r.Name == "widgets/finalize" && (!slices.Equal(r.Verbs, metav1.Verbs{"update"}) || r.Kind != w.Kind) {
			t.Errorf("widgets/finalize: %+v", r)
		}
	}
	if !slices.Equal(names, []string{"widgets", "widgets/finalize", "widgets/status"}) {
		t.Errorf("/api/v1 resources %v", names)
	}

	var agg apidiscoveryv2.APIGroupDiscoveryList
	readJSON(t, ts.get(t, "/api", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", ""), &agg)
	subs := agg.Items[0].Versions[0].Resources[0].Subresources
	if len(subs) != 2 || subs[0].Subresource != "finalize" || !slices.Equal(subs[0].Verbs, []string{"update"}) || subs[1].Subresource != "status" {
		t.Errorf("aggregated subresources %+v", subs)
	}
}
