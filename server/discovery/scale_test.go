package discovery_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/resource"
)

// TestScaleSubresource checks that a resource with a scale subresource is
// listed with "<plural>/scale" of kind autoscaling/v1 Scale and verbs get,
// patch and update, by aggregated and legacy discovery alike, as
// kube-apiserver lists a CRD's.
func TestScaleSubresource(t *testing.T) {
	widget := widgetV1()
	widget.Scale = &resource.ScaleInfo{SpecReplicasPath: ".spec.size", StatusReplicasPath: ".status.size"}
	ts := newTestServer(t, []*resource.Info{widget, gadgetV1()}, testDefinitions)

	for name, dc := range map[string]interface {
		ServerResourcesForGroupVersion(string) (*metav1.APIResourceList, error)
	}{
		"aggregated": ts.discoveryClient(t),
		"legacy":     ts.discoveryClient(t).WithLegacy(),
	} {
		list, err := dc.ServerResourcesForGroupVersion("test.apiloom.dev/v1")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var scale *metav1.APIResource
		for i, r := range list.APIResources {
			if r.Name == "widgets/scale" {
				scale = &list.APIResources[i]
			}
			if r.Name == "gadgets/scale" {
				t.Errorf("%s: gadgets, which have no scale subresource, list one", name)
			}
		}
		if scale == nil {
			t.Fatalf("%s: no widgets/scale in %+v", name, list.APIResources)
		}
		if scale.Group != "autoscaling" || scale.Version != "v1" || scale.Kind != "Scale" || !scale.Namespaced ||
			len(scale.Verbs) != 3 || scale.Verbs[0] != "get" || scale.Verbs[1] != "patch" || scale.Verbs[2] != "update" {
			t.Errorf("%s: widgets/scale = %+v", name, *scale)
		}
	}
}
