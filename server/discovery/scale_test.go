package discovery_test

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"

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

// TestScaleOpenAPI checks that OpenAPI v3 and v2 describe a /scale
// subresource as kube-apiserver describes a CRD's: get, put and patch of an
// autoscaling/v1 Scale (operations marked with that kind), patch bodies of
// exactly the types /scale accepts, and the Scale schema among the
// definitions; a kind without one has no such path.
func TestScaleOpenAPI(t *testing.T) {
	widget := widgetV1()
	widget.Scale = &resource.ScaleInfo{SpecReplicasPath: ".spec.size", StatusReplicasPath: ".status.size"}
	ts := newTestServer(t, []*resource.Info{widget, gadgetV1()}, testDefinitions)
	const path = "/apis/test.apiloom.dev/v1/namespaces/{namespace}/widgets/{name}/scale"
	scaleRef := "io.k8s.api.autoscaling.v1.Scale"
	wantPatch := []string{"application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml"}
	isScaleGVK := func(ext spec.Extensions) bool {
		gvk, _ := ext["x-kubernetes-group-version-kind"].(map[string]any)
		return gvk["group"] == "autoscaling" && gvk["version"] == "v1" && gvk["kind"] == "Scale"
	}

	var v3 spec3.OpenAPI
	readJSON(t, ts.get(t, "/openapi/v3/apis/test.apiloom.dev/v1", "application/json", ""), &v3)
	p := v3.Paths.Paths[path]
	if p == nil || p.Get == nil || p.Put == nil || p.Patch == nil || p.Post != nil || p.Delete != nil {
		t.Fatalf("v3 %s = %+v, want get, put and patch", path, p)
	}
	for _, op := range []*spec3.Operation{p.Get, p.Put, p.Patch} {
		if !isScaleGVK(op.Extensions) {
			t.Errorf("v3 %s: x-kubernetes-group-version-kind %v, want autoscaling/v1 Scale", op.OperationId, op.Extensions)
		}
		if ref := op.Responses.StatusCodeResponses[200].Content["application/json"].Schema.Ref.String(); !strings.HasSuffix(ref, scaleRef) {
			t.Errorf("v3 %s answers %s, want a Scale", op.OperationId, ref)
		}
	}
	if ref := p.Put.RequestBody.Content["application/json"].Schema.Ref.String(); !strings.HasSuffix(ref, scaleRef) {
		t.Errorf("v3 put body %s, want a Scale", ref)
	}
	var got []string
	for ct := range p.Patch.RequestBody.Content {
		got = append(got, ct)
	}
	if slices.Sort(got); !slices.Equal(got, slices.Sorted(slices.Values(wantPatch))) {
		t.Errorf("v3 patch body types %v, want %v", got, wantPatch)
	}
	if p.Patch.OperationId != "patchTestApiloomDevV1NamespacedWidgetScale" {
		t.Errorf("v3 patch operationId %q", p.Patch.OperationId)
	}
	if _, ok := v3.Components.Schemas[scaleRef]; !ok {
		t.Errorf("v3 components lack %s", scaleRef)
	}
	for k := range v3.Paths.Paths {
		if strings.Contains(k, "gadgets") && strings.HasSuffix(k, "/scale") {
			t.Errorf("v3 has %s for a kind without a scale subresource", k)
		}
	}

	var v2 spec.Swagger
	readJSON(t, ts.get(t, "/openapi/v2", "application/json", ""), &v2)
	p2, ok := v2.Paths.Paths[path]
	if !ok || p2.Get == nil || p2.Put == nil || p2.Patch == nil {
		t.Fatalf("v2 %s = %+v, want get, put and patch", path, p2)
	}
	if !slices.Equal(p2.Patch.Consumes, wantPatch) || !isScaleGVK(p2.Patch.Extensions) {
		t.Errorf("v2 patch consumes %v, extensions %v", p2.Patch.Consumes, p2.Patch.Extensions)
	}
	if _, ok := v2.Definitions[scaleRef]; !ok {
		t.Errorf("v2 definitions lack %s", scaleRef)
	}
}

// readJSON decodes resp's body, which must be 200, into v.
func readJSON(t *testing.T, resp *http.Response, v any) {
	t.Helper()
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %v %.300s", resp.Status, err, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatal(err)
	}
}
