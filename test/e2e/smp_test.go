package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/openapi3"
	"k8s.io/kube-openapi/pkg/validation/spec"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	"github.com/apiloom/apiloom/server/apiserver"
	"github.com/apiloom/apiloom/server/resource"
)

const databaseSpecSchema = "com.github.apiloom.apiloom.apis.example.v1.DatabaseSpec"

// TestOpenAPIAdvertisesAcceptedPatchTypes: the PATCH operations of OpenAPI
// v3 and v2 list exactly the patch types the server accepts, which its 415
// lists too, and the schemas carry the patch strategies kubectl computes
// strategic merge patches from: the users, +listType=map, merge by name
// (made explicit by the server), the extensions by their patchStrategy tag,
// and a Region's zones, which have neither, are replaced.
func TestOpenAPIAdvertisesAcceptedPatchTypes(t *testing.T) {
	ts, cs := startServer(t)
	ts.CreateNamespaces(t, "shop")
	dc := discovery.NewDiscoveryClientForConfigOrDie(ts.Config)
	gv := schema.GroupVersion{Group: "example.apiloom.dev", Version: "v1"}
	doc, err := openapi3.NewRoot(dc.OpenAPIV3()).GVSpec(gv)
	if err != nil {
		t.Fatal(err)
	}
	accepted := slices.Sorted(slices.Values(resource.PatchTypes()))
	if !slices.Contains(accepted, string(types.StrategicMergePatchType)) {
		t.Fatalf("accepted patch types %v", accepted)
	}
	// A /scale subresource takes what it takes on a CRD: no strategic
	// merge patch.
	acceptedBy := func(path string) []string {
		if strings.HasSuffix(path, "/scale") {
			return slices.Sorted(slices.Values(resource.ScalePatchTypes()))
		}
		return accepted
	}
	patches := 0
	for path, item := range doc.Paths.Paths {
		if item.Patch == nil {
			continue
		}
		patches++
		var got []string
		for ct := range item.Patch.RequestBody.Content {
			got = append(got, ct)
		}
		if slices.Sort(got); !slices.Equal(got, acceptedBy(path)) {
			t.Errorf("v3 PATCH %s takes %v, want %v", path, got, acceptedBy(path))
		}
	}
	if patches != 4 { // a database, its status and scale, a region
		t.Errorf("%d PATCH operations", patches)
	}
	props := doc.Components.Schemas[databaseSpecSchema].Properties
	wantExt := func(field string, want map[string]any) {
		t.Helper()
		p := props[field]
		for k, v := range want {
			if !reflect.DeepEqual(p.Extensions[k], v) {
				t.Errorf("v3 %s.%s: %s = %v, want %v", databaseSpecSchema, field, k, p.Extensions[k], v)
			}
		}
	}
	wantExt("users", map[string]any{"x-kubernetes-list-type": "map", "x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": "name"})
	wantExt("extensions", map[string]any{"x-kubernetes-list-type": "set", "x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": nil})
	if z := doc.Components.Schemas["com.github.apiloom.apiloom.apis.example.v1.RegionSpec"].Properties["zones"]; z.Extensions["x-kubernetes-patch-strategy"] != nil {
		t.Errorf("zones: %v", z.Extensions)
	}

	v2, err := dc.OpenAPISchema()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range v2.GetPaths().GetPath() {
		want := resource.PatchTypes()
		if strings.HasSuffix(p.GetName(), "/scale") {
			want = resource.ScalePatchTypes()
		}
		if op := p.GetValue().GetPatch(); op != nil && !slices.Equal(op.GetConsumes(), want) {
			t.Errorf("v2 PATCH %s consumes %v, want %v", p.GetName(), op.GetConsumes(), want)
		}
	}
	raw, err := restClient(t, ts.Config).Get().AbsPath("/openapi/v2").SetHeader("Accept", "application/json").DoRaw(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var swagger spec.Swagger
	if err := json.Unmarshal(raw, &swagger); err != nil {
		t.Fatal(err)
	}
	if ext := swagger.Definitions[databaseSpecSchema].Properties["users"].Extensions; ext["x-kubernetes-patch-merge-key"] != "name" {
		t.Errorf("v2 users: %v", ext)
	}

	// The 415 for any other body lists the same types, and the CBOR apply that CBOR serving adds.
	if _, err := cs.ExampleV1().Databases("shop").Create(t.Context(), newDatabase("orders"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = cs.ExampleV1().Databases("shop").Patch(t.Context(), "orders", types.PatchType("text/plain"), []byte(`{}`), metav1.PatchOptions{})
	if !apierrors.IsUnsupportedMediaType(err) || !strings.HasSuffix(err.Error(), "accepted media types include: "+strings.Join(resource.PatchTypes(), ", ")+", application/apply-patch+cbor") {
		t.Errorf("415: %v", err)
	}
}

// TestStrategicMergePatchClientset sends strategic merge patches through
// the generated clientset (client-go's RESTClient) to the example kinds.
func TestStrategicMergePatchClientset(t *testing.T) {
	ts, cs := startServer(t)
	ts.CreateNamespaces(t, "shop")
	ctx := t.Context()
	dbs := cs.ExampleV1().Databases("shop")
	db := newDatabase("orders")
	db.Spec.Users = []examplev1.DatabaseUser{{Name: "app", Privilege: "write"}, {Name: "report"}}
	db.Spec.Extensions = []string{"pg_trgm"}
	if _, err := dbs.Create(ctx, db, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	patch := func(sub, body string, opts metav1.PatchOptions) (*examplev1.Database, error) {
		t.Helper()
		var subresources []string
		if sub != "" {
			subresources = []string{sub}
		}
		return dbs.Patch(ctx, "orders", types.StrategicMergePatchType, []byte(body), opts, subresources...)
	}

	// Users merge by name: app changes, ops is added (and defaulted),
	// report is kept; an extension is added to the set.
	got, err := patch("", `{"spec":{"users":[{"name":"app","connectionLimit":5},{"name":"ops"}],"extensions":["pgcrypto"]}}`, metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantUsers := []examplev1.DatabaseUser{{Name: "app", Privilege: "write", ConnectionLimit: 5}, {Name: "ops", Privilege: "read"}, {Name: "report", Privilege: "read"}}
	if !reflect.DeepEqual(got.Spec.Users, wantUsers) || !reflect.DeepEqual(got.Spec.Extensions, []string{"pgcrypto", "pg_trgm"}) || got.Generation != 2 {
		t.Fatalf("users %+v extensions %v generation %d", got.Spec.Users, got.Spec.Extensions, got.Generation)
	}

	// Directives kubectl sends: delete by key, remove from a set, order.
	got, err = patch("", `{"spec":{"users":[{"name":"report","$patch":"delete"}],"$deleteFromPrimitiveList/extensions":["pg_trgm"],"$setElementOrder/users":[{"name":"ops"},{"name":"app"}]}}`, metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if names := userNames(got); !slices.Equal(names, []string{"ops", "app"}) || !slices.Equal(got.Spec.Extensions, []string{"pgcrypto"}) {
		t.Fatalf("users %v extensions %v", names, got.Spec.Extensions)
	}

	// The merged result is validated whole, with paths into the list.
	before := got
	_, err = patch("", `{"spec":{"users":[{"name":"app","privilege":"root"}]}}`, metav1.PatchOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `spec.users[1].privilege: Unsupported value: "root"`) {
		t.Fatalf("invalid privilege: %v", err)
	}
	// A dry run returns the result and stores nothing.
	got, err = patch("", `{"spec":{"users":[{"name":"dry"}]}}`, metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil || len(got.Spec.Users) != 3 {
		t.Fatalf("dry run: %v %+v", err, got)
	}
	if now, err := dbs.Get(ctx, "orders", metav1.GetOptions{}); err != nil || now.ResourceVersion != before.ResourceVersion {
		t.Fatalf("a refused or dry-run patch changed the object: %v", err)
	}

	// The status subresource takes only status; conditions carry no
	// merge key in this type, so a patch replaces them.
	got, err = patch("status", `{"status":{"phase":"Ready","conditions":[{"type":"Ready","status":"True","reason":"Up","message":"","lastTransitionTime":"2026-01-01T00:00:00Z"}]},"spec":{"replicas":9}}`, metav1.PatchOptions{})
	if err != nil || got.Status.Phase != "Ready" || len(got.Status.Conditions) != 1 || got.Spec.Replicas != 3 {
		t.Fatalf("status patch: %v %+v %+v", err, got.Status, got.Spec)
	}

	// A Region's zones have no merge key: replaced whole, as upstream.
	regions := cs.ExampleV1().Regions()
	if _, err := regions.Create(ctx, &examplev1.Region{ObjectMeta: metav1.ObjectMeta{Name: "eu"}, Spec: examplev1.RegionSpec{Zones: []string{"a", "b"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err := regions.Patch(ctx, "eu", types.StrategicMergePatchType, []byte(`{"spec":{"zones":["c"]}}`), metav1.PatchOptions{})
	if err != nil || !slices.Equal(r.Spec.Zones, []string{"c"}) {
		t.Fatalf("zones: %v %v", err, r)
	}
}

func userNames(db *examplev1.Database) []string {
	var names []string
	for _, u := range db.Spec.Users {
		names = append(names, u.Name)
	}
	return names
}

// TestKubectlStrategicMergePatch: `kubectl patch` without --type sends a
// strategic merge patch, and client-side `kubectl apply`, finding strategic
// merge patch advertised, computes one from the OpenAPI schemas: so a user
// someone else added stays when the manifest's users change, as a
// container added to a Deployment's pod template would, where a JSON merge
// patch (a CRD's) would drop it.
func TestKubectlStrategicMergePatch(t *testing.T) {
	requireKubectl(t)
	ts, _ := startServer(t)
	k := &kubectlEnv{t: t, kubeconfig: ts.Kubeconfig, home: t.TempDir()}
	dir := t.TempDir()
	manifest := func(users, extensions string) string {
		path := filepath.Join(dir, "db.yaml")
		body := "apiVersion: example.apiloom.dev/v1\nkind: Database\nmetadata: {name: orders, namespace: default}\n" +
			"spec:\n  engine: postgres\n  users: " + users + "\n  extensions: " + extensions + "\n"
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	users := func() string {
		return k.run("get", "db", "orders", "-n", "default", "-o", `jsonpath={range .spec.users[*]}{.name}:{.privilege} {end}| {.spec.extensions}`)
	}

	out := k.run("apply", "-f", manifest(`[{name: app, privilege: write}, {name: report}]`, `[pg_trgm, pgcrypto]`))
	if !strings.Contains(out, "database.example.apiloom.dev/orders created") {
		t.Fatalf("apply: %s", out)
	}
	// No --type: strategic. Someone else adds a user and an extension.
	out = k.run("patch", "db", "orders", "-n", "default", "-p", `{"spec":{"users":[{"name":"ops","privilege":"admin"}],"extensions":["postgis"]}}`)
	if !strings.Contains(out, "database.example.apiloom.dev/orders patched") {
		t.Fatalf("patch: %s", out)
	}
	if got := users(); got != `ops:admin app:write report:read | ["postgis","pg_trgm","pgcrypto"]` {
		t.Fatalf("after kubectl patch: %s", got)
	}
	// The manifest drops report and pgcrypto and changes app: kubectl
	// deletes what it applied before and leaves ops and postgis alone.
	out = k.run("apply", "-f", manifest(`[{name: app, privilege: admin}]`, `[pg_trgm]`))
	if !strings.Contains(out, "database.example.apiloom.dev/orders configured") {
		t.Fatalf("second apply: %s", out)
	}
	if got := users(); got != `ops:admin app:admin | ["postgis","pg_trgm"]` {
		t.Fatalf("after the second apply: %s", got)
	}

	// kubectl prints the server's refusal of a bad directive.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	c := k.cmd(ctx, "patch", "db", "orders", "-n", "default", "-p", `{"spec":{"users":[{"name":"app","$patch":"bogus"}]}}`)
	c.Stderr = &stderr
	if err := c.Run(); err == nil || !strings.Contains(stderr.String(), "unknown patch type: bogus in map: map[$patch:bogus name:app]") {
		t.Fatalf("bad directive: %v: %s", err, stderr.String())
	}
}

// TestStrategicMergePatchListLimitFlag: --strategic-merge-patch-max-list-elements
// reaches every resource's handler.
func TestStrategicMergePatchListLimitFlag(t *testing.T) {
	ts, cs := startServer(t, func(o *apiserver.Options) { o.StrategicMergePatchMaxListElements = 3 })
	ts.CreateNamespaces(t, "shop")
	dbs := cs.ExampleV1().Databases("shop")
	db := newDatabase("orders")
	db.Finalizers = []string{"example.com/a"}
	if _, err := dbs.Create(t.Context(), db, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	patch := func(finalizers string) error {
		_, err := dbs.Patch(t.Context(), "orders", types.StrategicMergePatchType, []byte(`{"metadata":{"finalizers":`+finalizers+`}}`), metav1.PatchOptions{})
		return err
	}
	if err := patch(`["example.com/b","example.com/c"]`); err != nil { // 1 + 2
		t.Fatal(err)
	}
	if err := patch(`["example.com/d"]`); !apierrors.IsRequestEntityTooLargeError(err) { // 3 + 1
		t.Fatalf("over the limit: %v", err)
	}
}
