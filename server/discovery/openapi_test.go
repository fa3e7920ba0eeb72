package discovery_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/openapi"
	"k8s.io/client-go/openapi3"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/util/proto"

	apiresource "github.com/apiloom/apiloom/server/resource"
)

var (
	widgetGVK = schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Widget"}
	gadgetGVK = schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Gadget"}
)

// Friendly names of the test API's schemas.
const (
	widgetSchema     = "com.github.apiloom.apiloom.server.discovery.testapi.v1.Widget"
	widgetListSchema = "com.github.apiloom.apiloom.server.discovery.testapi.v1.WidgetList"
)

func gvSpec(t *testing.T, ts *testServer, gv schema.GroupVersion) *spec3.OpenAPI {
	t.Helper()
	doc, err := openapi3.NewRoot(ts.discoveryClient(t).OpenAPIV3()).GVSpec(gv)
	if err != nil {
		t.Fatalf("GVSpec(%s): %v", gv, err)
	}
	return doc
}

func gvkOf(t *testing.T, ext map[string]any) map[string]any {
	t.Helper()
	m, ok := ext["x-kubernetes-group-version-kind"].(map[string]any)
	if !ok {
		t.Fatalf("operation GVK extension is %T, want a single object", ext["x-kubernetes-group-version-kind"])
	}
	return m
}

func TestOpenAPIV3Operations(t *testing.T) {
	ts := newTestServer(t, testInfos(), testDefinitions)
	doc := gvSpec(t, ts, widgetGVK.GroupVersion())

	wantPaths := []string{
		"/apis/test.apiloom.dev/v1/gadgets",
		"/apis/test.apiloom.dev/v1/gadgets/{name}",
		"/apis/test.apiloom.dev/v1/namespaces/{namespace}/widgets",
		"/apis/test.apiloom.dev/v1/namespaces/{namespace}/widgets/{name}",
		"/apis/test.apiloom.dev/v1/namespaces/{namespace}/widgets/{name}/status",
		"/apis/test.apiloom.dev/v1/widgets",
	}
	var paths []string
	for p := range doc.Paths.Paths {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	if !slices.Equal(paths, wantPaths) {
		t.Fatalf("paths = %v, want %v", paths, wantPaths)
	}

	for _, p := range []string{
		"/apis/test.apiloom.dev/v1/namespaces/{namespace}/widgets/{name}",
		"/apis/test.apiloom.dev/v1/namespaces/{namespace}/widgets/{name}/status",
	} {
		patch := doc.Paths.Paths[p].Patch
		if patch == nil {
			t.Fatalf("%s has no PATCH", p)
		}
		if g := gvkOf(t, patch.Extensions); g["group"] != group || g["version"] != "v1" || g["kind"] != "Widget" {
			t.Errorf("%s PATCH GVK = %v", p, g)
		}
		if patch.Extensions["x-kubernetes-action"] != "patch" {
			t.Errorf("%s PATCH action = %v", p, patch.Extensions["x-kubernetes-action"])
		}
		var types []string
		for ct := range patch.RequestBody.Content {
			types = append(types, ct)
		}
		slices.Sort(types)
		// Exactly what the handlers accept (their 415 lists the same).
		if want := slices.Sorted(slices.Values(apiresource.PatchTypes())); !slices.Equal(types, want) {
			t.Errorf("%s PATCH content types = %v, want %v", p, types, want)
		}
		if !slices.Contains(types, "application/strategic-merge-patch+json") {
			t.Errorf("%s PATCH lacks strategic merge patch, which kubectl apply looks for: %v", p, types)
		}
		if ref := patch.RequestBody.Content["application/merge-patch+json"].Schema.Ref.String(); ref != "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch" {
			t.Errorf("%s PATCH body ref = %s", p, ref)
		}
	}

	// fieldValidation, dryRun and fieldManager on every write.
	for p, item := range doc.Paths.Paths {
		for method, op := range map[string]*spec3.Operation{"post": item.Post, "put": item.Put, "patch": item.Patch} {
			if op == nil {
				continue
			}
			var names []string
			for _, param := range op.Parameters {
				if param.In == "query" {
					names = append(names, param.Name)
				}
			}
			for _, want := range []string{"dryRun", "fieldManager", "fieldValidation"} {
				if !slices.Contains(names, want) {
					t.Errorf("%s %s lacks query parameter %s (has %v)", method, p, want, names)
				}
			}
		}
	}

	// Namespaced paths declare the namespace parameter; the list across
	// namespaces answers with the list kind.
	nsPath := doc.Paths.Paths["/apis/test.apiloom.dev/v1/namespaces/{namespace}/widgets"]
	if len(nsPath.Parameters) != 1 || nsPath.Parameters[0].Name != "namespace" || nsPath.Parameters[0].In != "path" || !nsPath.Parameters[0].Required {
		t.Errorf("namespaced collection parameters = %+v", nsPath.Parameters)
	}
	all := doc.Paths.Paths["/apis/test.apiloom.dev/v1/widgets"]
	if all.Get == nil || all.Post != nil || all.Get.Extensions["x-kubernetes-action"] != "list" {
		t.Errorf("all-namespaces path = %+v", all)
	}
	if ref := all.Get.Responses.StatusCodeResponses[200].Content["application/json"].Schema.Ref.String(); ref != "#/components/schemas/"+widgetListSchema {
		t.Errorf("list response ref = %s", ref)
	}
	// Cluster-scoped resources have no namespace in their paths.
	gadget := doc.Paths.Paths["/apis/test.apiloom.dev/v1/gadgets/{name}"]
	if gadget.Delete == nil || len(gadget.Parameters) != 1 || gadget.Parameters[0].Name != "name" {
		t.Errorf("gadget object path = %+v", gadget)
	}
	if g := gvkOf(t, gadget.Delete.Extensions); g["kind"] != "Gadget" {
		t.Errorf("gadget DELETE GVK = %v", g)
	}
}

func TestOpenAPIV3Schemas(t *testing.T) {
	ts := newTestServer(t, testInfos(), testDefinitions)
	doc := gvSpec(t, ts, widgetGVK.GroupVersion())
	schemas := doc.Components.Schemas

	var names []string
	for n := range schemas {
		names = append(names, n)
	}
	slices.Sort(names)
	// Exactly what the group-version's kinds and operations reach: no
	// v1beta1 or other-group types, no unreferenced apimachinery types.
	want := []string{
		"com.github.apiloom.apiloom.server.discovery.testapi.v1.Gadget",
		"com.github.apiloom.apiloom.server.discovery.testapi.v1.GadgetList",
		"com.github.apiloom.apiloom.server.discovery.testapi.v1.GadgetSpec",
		widgetSchema,
		widgetListSchema,
		"com.github.apiloom.apiloom.server.discovery.testapi.v1.WidgetSpec",
		"com.github.apiloom.apiloom.server.discovery.testapi.v1.WidgetStatus",
		"io.k8s.apimachinery.pkg.apis.meta.v1.Condition",
		"io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
		"io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta",
		"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
		"io.k8s.apimachinery.pkg.apis.meta.v1.Patch",
		"io.k8s.apimachinery.pkg.apis.meta.v1.Preconditions",
		"io.k8s.apimachinery.pkg.apis.meta.v1.Status",
		"io.k8s.apimachinery.pkg.apis.meta.v1.StatusCause",
		"io.k8s.apimachinery.pkg.apis.meta.v1.StatusDetails",
		"io.k8s.apimachinery.pkg.apis.meta.v1.Time",
	}
	if !slices.Equal(names, want) {
		t.Fatalf("schemas:\n got %v\nwant %v", names, want)
	}

	widget := schemas[widgetSchema]
	var gvks []map[string]string
	if err := widget.Extensions.GetObject("x-kubernetes-group-version-kind", &gvks); err != nil ||
		!reflect.DeepEqual(gvks, []map[string]string{{"group": group, "version": "v1", "kind": "Widget"}}) {
		t.Errorf("Widget schema GVK = %v, %v; want a one-element list", gvks, err)
	}
	if err := schemas[widgetListSchema].Extensions.GetObject("x-kubernetes-group-version-kind", &gvks); err != nil || gvks[0]["kind"] != "WidgetList" {
		t.Errorf("WidgetList schema GVK = %v, %v", gvks, err)
	}
	for _, p := range []string{"apiVersion", "kind", "metadata", "spec", "status"} {
		if _, ok := widget.Properties[p]; !ok {
			t.Errorf("Widget schema lacks %s", p)
		}
	}
	// A ref with a description or default is wrapped in allOf, as OpenAPI v3 requires.
	if meta := widget.Properties["metadata"]; meta.Ref.String() != "" || len(meta.AllOf) != 1 ||
		meta.AllOf[0].Ref.String() != "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" {
		t.Errorf("Widget metadata = %+v, want allOf[ObjectMeta]", meta)
	}
	var selectable []map[string]string
	if err := widget.Extensions.GetObject("x-kubernetes-selectable-fields", &selectable); err != nil ||
		!reflect.DeepEqual(selectable, []map[string]string{{"fieldPath": "spec.color"}}) {
		t.Errorf("selectable fields = %v, %v", selectable, err)
	}

	// Every $ref in the document resolves inside it.
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		t.Fatal(err)
	}
	walkRefs(generic, func(ref string) {
		name, ok := strings.CutPrefix(ref, "#/components/schemas/")
		if _, found := schemas[name]; !ok || !found {
			t.Errorf("dangling $ref %q", ref)
		}
	})
}

func walkRefs(v any, f func(string)) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && k == "$ref" {
				f(s)
			}
			walkRefs(x, f)
		}
	case []any:
		for _, x := range v {
			walkRefs(x, f)
		}
	}
}

func TestOpenAPIV3Index(t *testing.T) {
	ts := newTestServer(t, testInfos(), testDefinitions)
	paths, err := ts.discoveryClient(t).OpenAPIV3().Paths()
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range paths {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"apis/other.apiloom.dev/v1alpha1", "apis/test.apiloom.dev/v1", "apis/test.apiloom.dev/v1beta1"}; !slices.Equal(keys, want) {
		t.Fatalf("OpenAPI v3 paths = %v, want %v", keys, want)
	}
	var index struct {
		Paths map[string]struct{ ServerRelativeURL string } `json:"paths"`
	}
	resp := ts.get(t, "/openapi/v3", "application/json", "")
	if err := json.NewDecoder(resp.Body).Decode(&index); err != nil {
		t.Fatal(err)
	}
	u := index.Paths["apis/test.apiloom.dev/v1"].ServerRelativeURL
	path, hash, ok := strings.Cut(u, "?hash=")
	if !ok || path != "/openapi/v3/apis/test.apiloom.dev/v1" || len(hash) != 128 {
		t.Fatalf("serverRelativeURL = %q", u)
	}

	// The hashed URL is immutable and its ETag is the hash; a stale hash
	// redirects to the current one; an unknown group-version is 404.
	resp = ts.get(t, u, "application/json", "")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" || resp.Header.Get("ETag") != `"`+hash+`"` {
		t.Errorf("GET %s: %s, Cache-Control %q, ETag %q", u, resp.Status, resp.Header.Get("Cache-Control"), resp.Header.Get("ETag"))
	}
	resp = ts.get(t, path+"?hash=0123", "application/json", "")
	if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != u {
		t.Errorf("stale hash: %s to %q, want 301 to %q", resp.Status, resp.Header.Get("Location"), u)
	}
	if resp = ts.get(t, "/openapi/v3/apis/test.apiloom.dev/v9", "application/json", ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown group-version: %s", resp.Status)
	}
}

// TestQueryParamVerifier runs the check kubectl apply and create -f make
// before they rely on server-side validation (--validate=strict).
func TestQueryParamVerifier(t *testing.T) {
	ts := newTestServer(t, testInfos(), testDefinitions)
	dc := ts.discoveryClient(t)
	dyn := dynamicfake.NewSimpleDynamicClient(kruntime.NewScheme())

	v3 := resource.NewQueryParamVerifierV3(dyn, dc.OpenAPIV3(), resource.QueryParamFieldValidation)
	for _, gvk := range []schema.GroupVersionKind{widgetGVK, gadgetGVK, {Group: otherGroup, Version: "v1alpha1", Kind: "Thing"}} {
		if err := v3.HasSupport(gvk); err != nil {
			t.Errorf("v3 HasSupport(%s) = %v", gvk, err)
		}
	}
	if err := v3.HasSupport(schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Nope"}); err == nil {
		t.Error("v3 HasSupport(unknown kind) = nil")
	}

	// The OpenAPI v2 fallback answers the same.
	v2 := resource.NewQueryParamVerifier(dyn, dc, resource.QueryParamFieldValidation)
	for _, gvk := range []schema.GroupVersionKind{widgetGVK, gadgetGVK} {
		if err := v2.HasSupport(gvk); err != nil {
			t.Errorf("v2 HasSupport(%s) = %v", gvk, err)
		}
	}
}

// TestOpenAPIV2 reads /openapi/v2 the way kubectl does: as protobuf, through
// kube-openapi's model parser.
func TestOpenAPIV2(t *testing.T) {
	ts := newTestServer(t, testInfos(), testDefinitions)
	doc, err := ts.discoveryClient(t).OpenAPISchema()
	if err != nil {
		t.Fatalf("OpenAPISchema: %v", err)
	}
	models, err := proto.NewOpenAPIData(doc)
	if err != nil {
		t.Fatalf("NewOpenAPIData: %v", err)
	}
	widget, ok := models.LookupModel(widgetSchema).(*proto.Kind)
	if !ok {
		t.Fatalf("Widget model = %T", models.LookupModel(widgetSchema))
	}
	if _, ok := widget.Fields["spec"]; !ok {
		t.Errorf("Widget v2 model fields = %v", widget.Keys())
	}
	var patchConsumes []string
	for _, p := range doc.GetPaths().GetPath() {
		if p.GetName() == "/apis/test.apiloom.dev/v1/namespaces/{namespace}/widgets/{name}" {
			patchConsumes = p.GetValue().GetPatch().GetConsumes()
		}
	}
	// kube-apiserver's order for built-in kinds, which is PatchTypes'.
	if want := apiresource.PatchTypes(); !slices.Equal(patchConsumes, want) {
		t.Errorf("v2 PATCH consumes %v, want %v", patchConsumes, want)
	}

	resp := ts.get(t, "/openapi/v2", "application/json", "")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("GET /openapi/v2 as JSON: %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
}

// openapi.Client is what kubectl explain reads; make sure a plain JSON read
// through it works for every group-version.
func TestOpenAPIV3AllGroupVersions(t *testing.T) {
	ts := newTestServer(t, testInfos(), testDefinitions)
	paths, err := openapi.NewClient(ts.discoveryClient(t).RESTClient()).Paths()
	if err != nil {
		t.Fatal(err)
	}
	for name, gv := range paths {
		b, err := gv.Schema("application/json")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var doc spec3.OpenAPI
		if err := json.Unmarshal(b, &doc); err != nil || doc.Version != "3.0.0" {
			t.Errorf("%s: openapi %q, %v", name, doc.Version, err)
		}
	}
}
