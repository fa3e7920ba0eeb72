package discovery_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/kube-openapi/pkg/common"

	apidiscovery "github.com/apiloom/apiloom/server/discovery"
	"github.com/apiloom/apiloom/server/resource"
)

var testVersion = version.Info{
	Major: "1", Minor: "37", GitVersion: "v1.37.0-apiloom", Compiler: "gc", Platform: "linux/amd64",
}

// testServer serves a discovery.Server over HTTP and records each request's
// path, so tests can tell which discovery path a client took.
type testServer struct {
	*httptest.Server
	mu    sync.Mutex
	paths []string
}

func newTestServer(t *testing.T, infos []*resource.Info, defs common.GetOpenAPIDefinitions) *testServer {
	t.Helper()
	s, err := apidiscovery.New(infos, defs, testVersion)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	mux := http.NewServeMux()
	s.Install(mux)
	ts := &testServer{}
	ts.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts.mu.Lock()
		ts.paths = append(ts.paths, r.URL.Path)
		ts.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// requested returns the paths requested so far and forgets them.
func (ts *testServer) requested() []string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	p := ts.paths
	ts.paths = nil
	return p
}

func (ts *testServer) config() *rest.Config { return &rest.Config{Host: ts.URL} }

func (ts *testServer) discoveryClient(t *testing.T) *discovery.DiscoveryClient {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(ts.config())
	if err != nil {
		t.Fatal(err)
	}
	return dc
}

// get performs a GET with the given Accept and If-None-Match headers.
func (ts *testServer) get(t *testing.T, path, accept, ifNoneMatch string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, ts.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if ifNoneMatch != "" {
		req.Header.Set("If-None-Match", ifNoneMatch)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

// flatten renders discovery results as sorted lines, one per resource, so
// the aggregated and legacy paths can be compared exactly. A subresource's
// singular name is left out: kube-apiserver's legacy lists leave it empty,
// and client-go fills in the parent's when it converts aggregated discovery.
func flatten(lists []*metav1.APIResourceList) []string {
	var out []string
	for _, l := range lists {
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") {
				r.SingularName = ""
			}
			verbs := slices.Clone(r.Verbs)
			sort.Strings(verbs)
			out = append(out, strings.Join([]string{
				l.GroupVersion, r.Name, r.SingularName, r.Kind,
				map[bool]string{true: "Namespaced", false: "Cluster"}[r.Namespaced],
				strings.Join(verbs, ","), strings.Join(r.ShortNames, ","), strings.Join(r.Categories, ","),
			}, " "))
		}
	}
	sort.Strings(out)
	return out
}

var wantResources = []string{
	"other.apiloom.dev/v1alpha1 things thing Thing Namespaced create,delete,deletecollection,get,list,patch,update,watch  ",
	"test.apiloom.dev/v1 gadgets gadget Gadget Cluster create,delete,deletecollection,get,list,patch,update,watch gd ",
	"test.apiloom.dev/v1 widgets widget Widget Namespaced create,delete,deletecollection,get,list,patch,update,watch wd all",
	"test.apiloom.dev/v1 widgets/status  Widget Namespaced get,patch,update  ",
	"test.apiloom.dev/v1beta1 widgets widget Widget Namespaced create,delete,deletecollection,get,list,patch,update,watch wd ",
	"test.apiloom.dev/v1beta1 widgets/status  Widget Namespaced get,patch,update  ",
}

func TestDiscoveryClientAggregated(t *testing.T) {
	ts := newTestServer(t, testInfos(), testDefinitions)
	dc := ts.discoveryClient(t)

	groups, lists, err := dc.ServerGroupsAndResources()
	if err != nil {
		t.Fatalf("ServerGroupsAndResources: %v", err)
	}
	if got, want := flatten(lists), wantResources; !slices.Equal(got, want) {
		t.Errorf("resources:\n got %q\nwant %q", got, want)
	}
	var names []string
	for _, g := range groups {
		names = append(names, g.Name+"@"+g.PreferredVersion.Version)
	}
	if want := []string{"other.apiloom.dev@v1alpha1", "test.apiloom.dev@v1"}; !slices.Equal(names, want) {
		t.Errorf("groups = %v, want %v", names, want)
	}
	// Aggregated discovery answers everything from /api and /apis; a
	// legacy /api would make client-go fetch every group-version too.
	if got := ts.requested(); !slices.Equal(got, []string{"/api", "/apis"}) {
		t.Errorf("requested %v, want only /api and /apis", got)
	}
}

func TestDiscoveryClientLegacy(t *testing.T) {
	ts := newTestServer(t, testInfos(), testDefinitions)
	dc := ts.discoveryClient(t).WithLegacy()

	_, lists, err := dc.ServerGroupsAndResources()
	if err != nil {
		t.Fatalf("ServerGroupsAndResources: %v", err)
	}
	if got, want := flatten(lists), wantResources; !slices.Equal(got, want) {
		t.Errorf("resources:\n got %q\nwant %q", got, want)
	}
	got := ts.requested()
	sort.Strings(got)
	want := []string{"/api", "/apis", "/apis/other.apiloom.dev/v1alpha1", "/apis/test.apiloom.dev/v1", "/apis/test.apiloom.dev/v1beta1"}
	if !slices.Equal(got, want) {
		t.Errorf("requested %v, want %v", got, want)
	}

	// Legacy /api lists no versions: client-go turns that into a core
	// group without versions, which nothing uses.
	g, err := dc.ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	for _, group := range g.Groups {
		if group.Name == "" && len(group.Versions) > 0 {
			t.Errorf("core group has versions: %+v", group)
		}
	}

	// The unused /apis/{group} is served too.
	resp := ts.get(t, "/apis/"+group, "application/json", "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /apis/%s: %s", group, resp.Status)
	}
}

func TestRESTMapper(t *testing.T) {
	ts := newTestServer(t, testInfos(), testDefinitions)
	dc := ts.discoveryClient(t)
	resources, err := restmapper.GetAPIGroupResources(dc)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewShortcutExpander(restmapper.NewDiscoveryRESTMapper(resources), dc, nil)

	widgets := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}
	for _, name := range []string{"widgets", "widget", "wd", "Widget", "widgets." + group, "wd." + group} {
		gvr, err := mapper.ResourceFor(schema.ParseGroupResource(name).WithVersion(""))
		if err != nil || gvr != widgets {
			t.Errorf("ResourceFor(%q) = %v, %v; want %v (the preferred version)", name, gvr, err, widgets)
		}
	}
	gvk, err := mapper.KindFor(schema.GroupVersionResource{Resource: "gd"})
	if err != nil || gvk != (schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Gadget"}) {
		t.Errorf("KindFor(gd) = %v, %v", gvk, err)
	}
	m, err := mapper.RESTMapping(schema.GroupKind{Group: group, Kind: "Gadget"})
	if err != nil {
		t.Fatal(err)
	}
	if m.Resource.Resource != "gadgets" || m.Scope.Name() != "root" {
		t.Errorf("Gadget mapping = %v scope %s, want gadgets, root", m.Resource, m.Scope.Name())
	}
	m, err = mapper.RESTMapping(schema.GroupKind{Group: group, Kind: "Widget"}, "v1beta1")
	if err != nil || m.Resource.Version != "v1beta1" || m.Scope.Name() != "namespace" {
		t.Errorf("Widget v1beta1 mapping = %+v, %v", m, err)
	}

	all, ok := restmapper.NewDiscoveryCategoryExpander(dc).Expand("all")
	if !ok || !slices.Equal(all, []schema.GroupResource{{Group: group, Resource: "widgets"}}) {
		t.Errorf(`Expand("all") = %v, %v`, all, ok)
	}
}

func TestServerVersion(t *testing.T) {
	ts := newTestServer(t, testInfos(), testDefinitions)
	got, err := ts.discoveryClient(t).ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if *got != testVersion {
		t.Errorf("ServerVersion = %+v, want %+v", *got, testVersion)
	}
}

func TestNewRejects(t *testing.T) {
	mutate := func(f func(*resource.Info)) []*resource.Info {
		w := widgetV1()
		f(w)
		return []*resource.Info{w}
	}
	tests := []struct {
		name  string
		infos []*resource.Info
		defs  common.GetOpenAPIDefinitions
		want  error
	}{
		{"nil info", []*resource.Info{nil}, testDefinitions, apidiscovery.ErrInvalidResource},
		{"no version", mutate(func(i *resource.Info) { i.Version = "" }), testDefinitions, apidiscovery.ErrInvalidResource},
		{"no plural", mutate(func(i *resource.Info) { i.Plural = "" }), testDefinitions, apidiscovery.ErrInvalidResource},
		{"no list kind", mutate(func(i *resource.Info) { i.ListKind = "" }), testDefinitions, apidiscovery.ErrInvalidResource},
		{"duplicate plural", []*resource.Info{widgetV1(), widgetV1()}, testDefinitions, apidiscovery.ErrInvalidResource},
		{"duplicate kind", []*resource.Info{widgetV1(), mutate(func(i *resource.Info) { i.Plural = "widgetz" })[0]}, testDefinitions, apidiscovery.ErrInvalidResource},
		{"no definitions", testInfos(), nil, apidiscovery.ErrMissingDefinition},
		{"unknown kind", mutate(func(i *resource.Info) { i.OpenAPIName = pkgV1 + ".Nope" }), testDefinitions, apidiscovery.ErrMissingDefinition},
		{"missing dependency", testInfos(), func(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
			defs := testDefinitions(ref)
			delete(defs, conditionKey)
			return defs
		}, apidiscovery.ErrMissingDefinition},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := apidiscovery.New(tt.infos, tt.defs, testVersion)
			if !errors.Is(err, tt.want) {
				t.Fatalf("New = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestNoResources(t *testing.T) {
	ts := newTestServer(t, nil, testDefinitions)
	_, lists, err := ts.discoveryClient(t).ServerGroupsAndResources()
	if err != nil || len(lists) != 0 {
		t.Fatalf("ServerGroupsAndResources = %v, %v; want nothing", lists, err)
	}
}

func TestHTTPCachingAndNegotiation(t *testing.T) {
	ts := newTestServer(t, testInfos(), testDefinitions)
	const v2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

	for _, path := range []string{"/api", "/apis", "/apis/" + group, "/apis/" + group + "/v1", "/version", "/openapi/v3", "/openapi/v2"} {
		resp := ts.get(t, path, "", "")
		etag := resp.Header.Get("ETag")
		if resp.StatusCode != http.StatusOK || etag == "" || resp.Header.Get("Vary") != "Accept" {
			t.Fatalf("GET %s: %s, ETag %q, Vary %q", path, resp.Status, etag, resp.Header.Get("Vary"))
		}
		if resp := ts.get(t, path, "", etag); resp.StatusCode != http.StatusNotModified {
			t.Errorf("GET %s If-None-Match %s: %s, want 304", path, etag, resp.Status)
		}
	}

	// The representations of /apis have their own ETags.
	legacy, aggregated := ts.get(t, "/apis", "application/json", ""), ts.get(t, "/apis", v2, "")
	if aggregated.Header.Get("Content-Type") != v2 || legacy.Header.Get("Content-Type") != "application/json" {
		t.Errorf("Content-Type: aggregated %q, legacy %q", aggregated.Header.Get("Content-Type"), legacy.Header.Get("Content-Type"))
	}
	if legacy.Header.Get("ETag") == aggregated.Header.Get("ETag") {
		t.Error("legacy and aggregated /apis share an ETag")
	}
	if resp := ts.get(t, "/apis", v2, legacy.Header.Get("ETag")); resp.StatusCode != http.StatusOK {
		t.Errorf("aggregated /apis with the legacy ETag: %s, want 200", resp.Status)
	}
	const v2beta1 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
	beta := ts.get(t, "/apis", v2beta1+",application/json", "")
	var list metav1.TypeMeta
	if err := json.NewDecoder(beta.Body).Decode(&list); err != nil || beta.Header.Get("Content-Type") != v2beta1 ||
		list.APIVersion != "apidiscovery.k8s.io/v2beta1" || list.Kind != "APIGroupDiscoveryList" {
		t.Errorf("/apis as v2beta1: %q %+v %v", beta.Header.Get("Content-Type"), list, err)
	}

	// Errors are Status objects.
	for path, code := range map[string]int{"/apis/nope": http.StatusNotFound, "/apis/" + group + "/v9": http.StatusNotFound} {
		resp := ts.get(t, path, "", "")
		var status metav1.Status
		if err := json.NewDecoder(resp.Body).Decode(&status); err != nil || resp.StatusCode != code || int(status.Code) != code || status.Reason != metav1.StatusReasonNotFound {
			t.Errorf("GET %s: %s %+v %v", path, resp.Status, status, err)
		}
	}
	if resp := ts.get(t, "/apis", "application/vnd.kubernetes.protobuf", ""); resp.StatusCode != http.StatusNotAcceptable {
		t.Errorf("GET /apis as protobuf only: %s, want 406", resp.Status)
	}
	if resp := ts.get(t, "/version", "text/html", ""); resp.StatusCode != http.StatusNotAcceptable {
		t.Errorf("GET /version as HTML: %s, want 406", resp.Status)
	}
}

// TestDeterministic: replicas serving the same resources must agree on every
// byte and hash, or clients would chase OpenAPI redirects between them.
func TestDeterministic(t *testing.T) {
	infos := testInfos()
	a, b := newTestServer(t, infos, testDefinitions), newTestServer(t, []*resource.Info{infos[3], infos[2], infos[1], infos[0]}, testDefinitions)
	for _, path := range []string{"/apis", "/openapi/v3", "/openapi/v2", "/openapi/v3/apis/" + group + "/v1"} {
		if ea, eb := a.get(t, path, "", "").Header.Get("ETag"), b.get(t, path, "", "").Header.Get("ETag"); ea != eb {
			t.Errorf("%s: ETag %s vs %s", path, ea, eb)
		}
	}
}

// TestTrailingSlash: /api/ is /api, and so on, as in kube-apiserver (a
// conformance test and kubectl proxy users read /api/).
func TestTrailingSlash(t *testing.T) {
	ts := newTestServer(t, testInfos(), testDefinitions)
	for _, want := range []string{"/api", "/apis", "/apis/" + group, "/apis/" + group + "/v1"} {
		path := want + "/"
		got, base := ts.get(t, path, "application/json", ""), ts.get(t, want, "application/json", "")
		if got.StatusCode != http.StatusOK || got.Header.Get("ETag") != base.Header.Get("ETag") {
			t.Errorf("GET %s: %s, ETag %q; want 200 and %s's ETag %q", path, got.Status, got.Header.Get("ETag"), want, base.Header.Get("ETag"))
		}
	}
}

// TestServerAddress: /api names the server's address for every client, as
// kube-apiserver's serverAddressByClientCIDRs does.
func TestServerAddress(t *testing.T) {
	s, err := apidiscovery.New(testInfos(), testDefinitions, testVersion, apidiscovery.WithServerAddress("10.0.0.1:6443"))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	s.Install(mux)
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api", nil))
	var got metav1.APIVersions
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || len(got.ServerAddressByClientCIDRs) != 1 ||
		got.ServerAddressByClientCIDRs[0] != (metav1.ServerAddressByClientCIDR{ClientCIDR: "0.0.0.0/0", ServerAddress: "10.0.0.1:6443"}) {
		t.Errorf("/api: %v %s", err, rec.Body)
	}
}
