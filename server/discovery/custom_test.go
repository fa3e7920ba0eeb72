package discovery_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"

	apidiscovery "github.com/apiloom/apiloom/server/discovery"
	"github.com/apiloom/apiloom/server/resource"
)

// A Widget with its own subresources, as apiserver-gen describes a
// Database's: an action (backup), a view (connection) and a stream (logs),
// and a subresource the server serves itself, of another group's kind (as
// serviceaccounts/token).
const (
	backupRequestKey = pkgV1 + ".BackupRequest"
	backupResultKey  = pkgV1 + ".BackupResult"
	connectionKey    = pkgV1 + ".WidgetConnection"
	logOptionsKey    = pkgV1 + ".WidgetLogOptions"
)

func customWidget() *resource.Info {
	w := widgetV1()
	gvk := func(kind string) metav1.GroupVersionKind {
		return metav1.GroupVersionKind{Group: group, Version: "v1", Kind: kind}
	}
	w.Subresources = []resource.SubresourceInfo{
		{Name: "backup", Kind: gvk("BackupRequest"), Verbs: []string{"create"}, Type: resource.Action,
			InputOpenAPIName: backupRequestKey, ResultOpenAPIName: backupResultKey},
		{Name: "connection", Kind: gvk("WidgetConnection"), Verbs: []string{"get"}, Type: resource.View,
			ResultOpenAPIName: connectionKey},
		{Name: "logs", Kind: gvk("Widget"), Verbs: []string{"get"}, Type: resource.Stream,
			InputOpenAPIName: logOptionsKey},
		{Name: "token", Kind: metav1.GroupVersionKind{Group: "authentication.k8s.io", Version: "v1", Kind: "TokenRequest"},
			Verbs: []string{"create"}},
	}
	return w
}

// customDefinitions adds the subresources' types to the test API's.
func customDefinitions(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	defs := testDefinitions(ref)
	str := func(desc string) spec.Schema { return *spec.StringProperty().WithDescription(desc) }
	typeMeta := map[string]spec.Schema{"kind": str("Kind."), "apiVersion": str("APIVersion.")}
	obj := func(desc string, props map[string]spec.Schema) common.OpenAPIDefinition {
		for k, v := range typeMeta {
			props[k] = v
		}
		return common.OpenAPIDefinition{Schema: spec.Schema{SchemaProps: spec.SchemaProps{
			Description: desc, Type: []string{"object"}, Properties: props,
		}}}
	}
	defs[backupRequestKey] = obj("BackupRequest asks for a backup.", map[string]spec.Schema{
		"destination": str("Destination is where the backup is written."),
	})
	defs[backupResultKey] = obj("BackupResult is the backup made.", map[string]spec.Schema{
		"location": str("Location is where it went."),
		"widget":   {SchemaProps: spec.SchemaProps{Description: "The widget backed up.", Ref: ref(pkgV1 + ".Widget")}},
	})
	defs[backupResultKey] = common.OpenAPIDefinition{Schema: defs[backupResultKey].Schema, Dependencies: []string{pkgV1 + ".Widget"}}
	defs[connectionKey] = obj("WidgetConnection is how to reach a Widget.", map[string]spec.Schema{
		"endpoint": str("Endpoint is host:port."),
		"uris":     {SchemaProps: spec.SchemaProps{Description: "URIs.", Type: []string{"array"}, Items: &spec.SchemaOrArray{Schema: spec.StringProperty()}}},
	})
	defs[logOptionsKey] = obj("WidgetLogOptions are a log request's options.", map[string]spec.Schema{
		"follow":     *spec.BooleanProperty().WithDescription("Follow keeps the stream open."),
		"tailLines":  *spec.Int64Property().WithDescription("TailLines is how many lines to start with."),
		"containers": {SchemaProps: spec.SchemaProps{Description: "Containers to read.", Type: []string{"array"}, Items: &spec.SchemaOrArray{Schema: spec.StringProperty()}}},
		"sinceTime":  {SchemaProps: spec.SchemaProps{Description: "Not a query parameter.", Ref: ref(timeKey)}},
	})
	defs[logOptionsKey] = common.OpenAPIDefinition{Schema: defs[logOptionsKey].Schema, Dependencies: []string{timeKey}}
	return defs
}

// TestCustomSubresourceDiscovery: a kind's own subresources are listed as
// kube-apiserver lists pods/eviction, pods/log and pods/binding: in legacy
// discovery by "plural/name", with the kind, its group and version only
// when they are not the list's, the verbs, the scope and no singular name;
// in aggregated discovery with the full kind as responseKind.
func TestCustomSubresourceDiscovery(t *testing.T) {
	ts := newTestServer(t, []*resource.Info{customWidget(), gadgetV1()}, customDefinitions)

	var list metav1.APIResourceList
	readJSON(t, ts.get(t, "/apis/test.apiloom.dev/v1", "application/json", ""), &list)
	got := map[string]metav1.APIResource{}
	for _, r := range list.APIResources {
		got[r.Name] = r
	}
	for _, want := range []metav1.APIResource{
		{Name: "widgets/backup", Namespaced: true, Kind: "BackupRequest", Verbs: []string{"create"}},
		{Name: "widgets/connection", Namespaced: true, Kind: "WidgetConnection", Verbs: []string{"get"}},
		{Name: "widgets/logs", Namespaced: true, Kind: "Widget", Verbs: []string{"get"}},
		{Name: "widgets/token", Namespaced: true, Group: "authentication.k8s.io", Version: "v1", Kind: "TokenRequest", Verbs: []string{"create"}},
	} {
		r, ok := got[want.Name]
		if !ok {
			t.Errorf("legacy discovery lacks %s", want.Name)
			continue
		}
		if r.Group != want.Group || r.Version != want.Version || r.Kind != want.Kind || r.Namespaced != want.Namespaced ||
			!slices.Equal(r.Verbs, want.Verbs) || r.SingularName != "" || r.StorageVersionHash != "" {
			t.Errorf("legacy %s = %+v, want %+v", want.Name, r, want)
		}
	}
	if _, ok := got["gadgets/backup"]; ok {
		t.Error("gadgets, without subresources of their own, list one")
	}

	var agg apidiscoveryv2.APIGroupDiscoveryList
	readJSON(t, ts.get(t, "/apis", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", ""), &agg)
	subs := map[string]apidiscoveryv2.APISubresourceDiscovery{}
	for _, r := range agg.Items[0].Versions[0].Resources {
		if r.Resource == "widgets" {
			for _, s := range r.Subresources {
				subs[s.Subresource] = s
			}
		}
	}
	for name, want := range map[string]string{
		"backup": "test.apiloom.dev/v1 BackupRequest create", "connection": "test.apiloom.dev/v1 WidgetConnection get",
		"logs": "test.apiloom.dev/v1 Widget get", "token": "authentication.k8s.io/v1 TokenRequest create",
	} {
		s, ok := subs[name]
		if !ok || s.ResponseKind == nil {
			t.Errorf("aggregated discovery lacks widgets/%s: %+v", name, subs)
			continue
		}
		k := s.ResponseKind
		if g := k.Group + "/" + k.Version + " " + k.Kind + " " + strings.Join(s.Verbs, ","); g != want {
			t.Errorf("aggregated widgets/%s = %q, want %q", name, g, want)
		}
	}

	// client-go reads both forms alike.
	for name, dc := range map[string]interface {
		ServerResourcesForGroupVersion(string) (*metav1.APIResourceList, error)
	}{"aggregated": ts.discoveryClient(t), "legacy": ts.discoveryClient(t).WithLegacy()} {
		l, err := dc.ServerResourcesForGroupVersion("test.apiloom.dev/v1")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var names []string
		for _, r := range l.APIResources {
			if strings.HasPrefix(r.Name, "widgets/") {
				names = append(names, r.Name)
			}
		}
		slices.Sort(names)
		if want := []string{"widgets/backup", "widgets/connection", "widgets/logs", "widgets/status", "widgets/token"}; !slices.Equal(names, want) {
			t.Errorf("%s: %v, want %v", name, names, want)
		}
	}
}

// TestCustomSubresourceOpenAPIV3: each custom subresource has a path with
// one operation written as kube-apiserver writes pods/eviction (an action)
// and pods/log (a stream); the definitions they read and answer are in the
// document, marked as kinds of the group-version.
func TestCustomSubresourceOpenAPIV3(t *testing.T) {
	ts := newTestServer(t, []*resource.Info{customWidget(), gadgetV1()}, customDefinitions)
	var doc spec3.OpenAPI
	readJSON(t, ts.get(t, "/openapi/v3/apis/test.apiloom.dev/v1", "application/json", ""), &doc)
	const object = "/apis/test.apiloom.dev/v1/namespaces/{namespace}/widgets/{name}/"
	ref := func(key string) string {
		return "#/components/schemas/com.github.apiloom.apiloom.server.discovery.testapi.v1." + key
	}
	params := func(o *spec3.Operation) []string {
		var out []string
		for _, p := range o.Parameters {
			out = append(out, p.Name+":"+strings.Join(p.Schema.Type, ""))
		}
		return out
	}
	checkOp := func(o *spec3.Operation, id, action, kind string) {
		t.Helper()
		if o == nil {
			t.Fatalf("no operation %s", id)
		}
		gvk := gvkOf(t, o.Extensions)
		if o.OperationId != id || o.Extensions["x-kubernetes-action"] != action ||
			gvk["group"] != group || gvk["version"] != "v1" || gvk["kind"] != kind || !slices.Equal(o.Tags, []string{"testApiloomDev_v1"}) {
			t.Errorf("%s: id %q, extensions %v, tags %v", id, o.OperationId, o.Extensions, o.Tags)
		}
	}

	backup := doc.Paths.Paths[object+"backup"]
	if backup == nil || backup.Get != nil || backup.Put != nil || backup.Patch != nil || backup.Delete != nil {
		t.Fatalf("backup path %+v, want POST only", backup)
	}
	checkOp(backup.Post, "createTestApiloomDevV1NamespacedWidgetBackup", "post", "BackupRequest")
	if backup.Post.Description != "create backup of a Widget" {
		t.Errorf("backup description %q", backup.Post.Description)
	}
	if got := params(backup.Post); !slices.Equal(got, []string{"dryRun:string", "fieldManager:string", "fieldValidation:string"}) {
		t.Errorf("backup query parameters %v", got)
	}
	if b := backup.Post.RequestBody; b == nil || !b.Required || b.Content["application/json"].Schema.Ref.String() != ref("BackupRequest") {
		t.Errorf("backup body %+v", b)
	}
	for _, code := range []int{200, 201, 202} {
		r := backup.Post.Responses.StatusCodeResponses[code]
		if r == nil || r.Content["application/json"].Schema.Ref.String() != ref("BackupResult") {
			t.Errorf("backup %d answers %+v, want a BackupResult", code, r)
		}
	}
	var pathParams []string
	for _, p := range backup.Parameters {
		pathParams = append(pathParams, p.Name+":"+p.In)
	}
	if !slices.Equal(pathParams, []string{"name:path", "namespace:path"}) {
		t.Errorf("backup path parameters %v", pathParams)
	}

	conn := doc.Paths.Paths[object+"connection"]
	if conn == nil || conn.Post != nil {
		t.Fatalf("connection path %+v, want GET only", conn)
	}
	checkOp(conn.Get, "readTestApiloomDevV1NamespacedWidgetConnection", "get", "WidgetConnection")
	if conn.Get.RequestBody != nil || len(conn.Get.Parameters) != 0 ||
		conn.Get.Responses.StatusCodeResponses[200].Content["application/json"].Schema.Ref.String() != ref("WidgetConnection") {
		t.Errorf("connection GET %+v", conn.Get)
	}

	logs := doc.Paths.Paths[object+"logs"]
	if logs == nil || logs.Post != nil {
		t.Fatalf("logs path %+v, want GET only", logs)
	}
	checkOp(logs.Get, "readTestApiloomDevV1NamespacedWidgetLogs", "get", "Widget")
	if logs.Get.Description != "read logs of the specified Widget" {
		t.Errorf("logs description %q", logs.Get.Description)
	}
	if got := params(logs.Get); !slices.Equal(got, []string{"containers:string", "follow:boolean", "tailLines:integer"}) {
		t.Errorf("logs query parameters %v, want one per scalar field of the options", got)
	}
	if p := logs.Get.Parameters; len(p) > 1 && p[1].Description != "Follow keeps the stream open." {
		t.Errorf("follow described %q", p[1].Description)
	}
	ok := logs.Get.Responses.StatusCodeResponses[200]
	if ok == nil || len(ok.Content) != 1 || ok.Content["text/plain"] == nil || !slices.Equal(ok.Content["text/plain"].Schema.Type, []string{"string"}) {
		t.Errorf("logs answers %+v, want a text/plain string", ok)
	}

	if _, ok := doc.Paths.Paths[object+"token"]; ok {
		t.Error("a subresource the server serves itself got a path")
	}

	for key, kind := range map[string]string{"BackupRequest": "BackupRequest", "BackupResult": "BackupResult",
		"WidgetConnection": "WidgetConnection", "WidgetLogOptions": "WidgetLogOptions"} {
		s, ok := doc.Components.Schemas[strings.TrimPrefix(ref(key), "#/components/schemas/")]
		if !ok {
			t.Errorf("components lack %s", key)
			continue
		}
		gvks, _ := s.Extensions["x-kubernetes-group-version-kind"].([]any)
		if len(gvks) != 1 || gvks[0].(map[string]any)["kind"] != kind || gvks[0].(map[string]any)["group"] != group {
			t.Errorf("%s x-kubernetes-group-version-kind %v", key, s.Extensions)
		}
	}
	// What the options reach is there too.
	if _, ok := doc.Components.Schemas["io.k8s.apimachinery.pkg.apis.meta.v1.Time"]; !ok {
		t.Error("components lack the options' dependencies")
	}
}

// TestCustomSubresourceOpenAPIV2: the same in the OpenAPI v2 document.
func TestCustomSubresourceOpenAPIV2(t *testing.T) {
	ts := newTestServer(t, []*resource.Info{customWidget(), gadgetV1()}, customDefinitions)
	var doc spec.Swagger
	readJSON(t, ts.get(t, "/openapi/v2", "application/json", ""), &doc)
	const object = "/apis/test.apiloom.dev/v1/namespaces/{namespace}/widgets/{name}/"
	ref := func(key string) string {
		return "#/definitions/com.github.apiloom.apiloom.server.discovery.testapi.v1." + key
	}

	backup := doc.Paths.Paths[object+"backup"].Post
	if backup == nil || backup.ID != "createTestApiloomDevV1NamespacedWidgetBackup" || backup.Extensions["x-kubernetes-action"] != "post" {
		t.Fatalf("backup POST %+v", backup)
	}
	var body *spec.Parameter
	for i, p := range backup.Parameters {
		if p.In == "body" {
			body = &backup.Parameters[i]
		}
	}
	if body == nil || !body.Required || body.Schema.Ref.String() != ref("BackupRequest") {
		t.Errorf("backup body %+v", body)
	}
	if r := backup.Responses.StatusCodeResponses[201]; r.Schema == nil || r.Schema.Ref.String() != ref("BackupResult") {
		t.Errorf("backup 201 %+v", r)
	}

	logs := doc.Paths.Paths[object+"logs"].Get
	if logs == nil || logs.ID != "readTestApiloomDevV1NamespacedWidgetLogs" || !slices.Equal(logs.Produces, []string{"text/plain"}) {
		t.Fatalf("logs GET %+v", logs)
	}
	if r := logs.Responses.StatusCodeResponses[200]; r.Schema == nil || !slices.Equal(r.Schema.Type, []string{"string"}) {
		t.Errorf("logs 200 %+v", r)
	}
	var names []string
	for _, p := range logs.Parameters {
		names = append(names, p.Name+":"+p.In+":"+p.Type)
	}
	if !slices.Equal(names, []string{"containers:query:string", "follow:query:boolean", "tailLines:query:integer"}) {
		t.Errorf("logs parameters %v", names)
	}
	if conn := doc.Paths.Paths[object+"connection"].Get; conn == nil || conn.Responses.StatusCodeResponses[200].Schema.Ref.String() != ref("WidgetConnection") {
		t.Errorf("connection GET %+v", conn)
	}
	for _, key := range []string{"BackupRequest", "BackupResult", "WidgetConnection", "WidgetLogOptions"} {
		if _, ok := doc.Definitions[strings.TrimPrefix(ref(key), "#/definitions/")]; !ok {
			t.Errorf("definitions lack %s", key)
		}
	}
}

// TestCustomSubresourceRejected: New refuses a subresource it cannot
// describe, and one whose definitions are missing.
func TestCustomSubresourceRejected(t *testing.T) {
	for name, tc := range map[string]struct {
		change func(*resource.SubresourceInfo)
		want   error
	}{
		"unknown type":        {func(s *resource.SubresourceInfo) { s.Type = "rpc" }, apidiscovery.ErrInvalidResource},
		"slash":               {func(s *resource.SubresourceInfo) { s.Name = "a/b" }, apidiscovery.ErrInvalidResource},
		"status":              {func(s *resource.SubresourceInfo) { s.Name = "status" }, apidiscovery.ErrInvalidResource},
		"twice":               {func(s *resource.SubresourceInfo) { s.Name = "logs" }, apidiscovery.ErrInvalidResource},
		"action without body": {func(s *resource.SubresourceInfo) { s.InputOpenAPIName = "" }, apidiscovery.ErrInvalidResource},
		"missing definition":  {func(s *resource.SubresourceInfo) { s.ResultOpenAPIName = pkgV1 + ".Nowhere" }, apidiscovery.ErrMissingDefinition},
	} {
		w := customWidget()
		tc.change(&w.Subresources[0])
		if _, err := apidiscovery.New([]*resource.Info{w}, customDefinitions, version.Info{}); !errors.Is(err, tc.want) {
			t.Errorf("%s: New = %v, want %v", name, err, tc.want)
		}
	}
}

// TestKubectlCustomSubresources: kubectl api-resources and explain still
// work with custom subresources listed and described.
func TestKubectlCustomSubresources(t *testing.T) {
	ts := newTestServer(t, []*resource.Info{customWidget(), gadgetV1()}, customDefinitions)
	out := kubectl(t, ts, "api-resources", "--api-group", group, "-o", "wide")
	if !strings.Contains(out, "widgets") || !strings.Contains(out, "Widget") || strings.Contains(out, "backup") {
		t.Errorf("kubectl api-resources:\n%s", out)
	}
	out = kubectl(t, ts, "explain", "widgets.spec")
	if !strings.Contains(out, "KIND:       Widget") || !strings.Contains(out, "color") {
		t.Errorf("kubectl explain widgets.spec:\n%s", out)
	}
}
