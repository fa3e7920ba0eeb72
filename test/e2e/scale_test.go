package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/scale"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	"github.com/apiloom/apiloom/generated/clientset/versioned"
)

var databasesGR = schema.GroupResource{Group: "example.apiloom.dev", Resource: "databases"}

// newScaleClient is client-go's scale client, finding the scale
// subresource's kind through discovery as kubectl and the HPA do.
func newScaleClient(t *testing.T, cs versioned.Interface) scale.ScalesGetter {
	t.Helper()
	dc, ok := cs.Discovery().(*discovery.DiscoveryClient)
	if !ok {
		t.Fatalf("discovery client is %T", cs.Discovery())
	}
	cached := memory.NewMemCacheClient(dc)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(cached)
	return scale.New(dc.RESTClient(), mapper, dynamic.LegacyAPIPathResolverFunc, scale.NewDiscoveryScaleKindResolver(cached))
}

// createDatabase creates a postgres Database with replicas replicas.
func createDatabase(t *testing.T, cs versioned.Interface, name string, replicas int32) *examplev1.Database {
	t.Helper()
	db, err := cs.ExampleV1().Databases("default").Create(t.Context(), &examplev1.Database{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       examplev1.DatabaseSpec{Engine: "postgres", Replicas: replicas},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// TestScaleClient checks client-go's scale client against the scale
// subresource: the Scale mirrors the object (name, uid, resourceVersion,
// spec and status replicas, the selector), and an update through it
// scales the object, bumps its generation, keeps its status and records
// the writer in its managed fields as kube-apiserver does for a CRD.
func TestScaleClient(t *testing.T) {
	_, cs := startServer(t)
	ctx := t.Context()
	dbs := cs.ExampleV1().Databases("default")
	db := createDatabase(t, cs, "orders", 1)
	db.Status = examplev1.DatabaseStatus{Replicas: 1, Selector: "app=orders", Phase: "Ready"}
	db, err := dbs.UpdateStatus(ctx, db, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	scales := newScaleClient(t, cs).Scales("default")
	s, err := scales.Get(ctx, databasesGR, "orders", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get scale: %v", err)
	}
	if s.Name != "orders" || s.Namespace != "default" || s.UID != db.UID || s.ResourceVersion != db.ResourceVersion ||
		!s.CreationTimestamp.Equal(&db.CreationTimestamp) ||
		s.Spec.Replicas != 1 || s.Status.Replicas != 1 || s.Status.Selector != "app=orders" {
		t.Fatalf("scale = %+v, want the object's (%s, rv %s)", s, db.UID, db.ResourceVersion)
	}

	s.Spec.Replicas = 3
	got, err := scales.Update(ctx, databasesGR, s, metav1.UpdateOptions{FieldManager: "autoscaler"})
	if err != nil {
		t.Fatalf("update scale: %v", err)
	}
	after, err := dbs.Get(ctx, "orders", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.Replicas != 3 || got.ResourceVersion != after.ResourceVersion {
		t.Fatalf("update returned %+v; object is at rv %s", got, after.ResourceVersion)
	}
	if after.Spec.Replicas != 3 || after.Generation != db.Generation+1 || after.Status.Phase != "Ready" || after.Spec.Engine != "postgres" {
		t.Fatalf("after scaling: spec %+v, generation %d (was %d), status %+v", after.Spec, after.Generation, db.Generation, after.Status)
	}
	var entry *metav1.ManagedFieldsEntry
	for i, e := range after.ManagedFields {
		if e.Manager == "autoscaler" {
			entry = &after.ManagedFields[i]
		}
	}
	// Upstream's ScaleHandler gives a new manager no timestamp.
	if entry == nil || entry.Subresource != "scale" || entry.APIVersion != "example.apiloom.dev/v1" ||
		entry.Operation != metav1.ManagedFieldsOperationUpdate || entry.FieldsV1 == nil ||
		string(entry.FieldsV1.Raw) != `{"f:spec":{"f:replicas":{}}}` || entry.Time != nil {
		t.Fatalf("managed fields = %+v, want autoscaler owning spec.replicas through scale", after.ManagedFields)
	}

	// A stale resourceVersion is a conflict, and changes nothing.
	s.Spec.Replicas = 5
	if _, err := scales.Update(ctx, databasesGR, s, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("update with a stale resourceVersion: err = %v, want 409", err)
	}
	// Without one, the update applies to the object as it is.
	s.ResourceVersion = ""
	if got, err = scales.Update(ctx, databasesGR, s, metav1.UpdateOptions{}); err != nil || got.Spec.Replicas != 5 {
		t.Fatalf("unconditional update: %+v, %v", got, err)
	}

	// A patch through the scale client.
	if got, err = scales.Patch(ctx, examplev1.SchemeGroupVersion.WithResource("databases"), "orders", types.MergePatchType,
		[]byte(`{"spec":{"replicas":2}}`), metav1.PatchOptions{}); err != nil || got.Spec.Replicas != 2 {
		t.Fatalf("merge patch: %+v, %v", got, err)
	}
	if _, err := scales.Get(ctx, databasesGR, "nope", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get scale of a missing object: err = %v, want 404", err)
	}
}

// TestScaleDynamic reads and writes the scale subresource with the dynamic
// client, as generic controllers do, with every patch type /scale takes.
func TestScaleDynamic(t *testing.T) {
	ts, cs := startServer(t)
	ctx := t.Context()
	createDatabase(t, cs, "orders", 2)
	dyn := dynamic.NewForConfigOrDie(ts.Config).Resource(examplev1.SchemeGroupVersion.WithResource("databases")).Namespace("default")

	u, err := dyn.Get(ctx, "orders", metav1.GetOptions{}, "scale")
	if err != nil {
		t.Fatal(err)
	}
	if u.GetKind() != "Scale" || u.GetAPIVersion() != "autoscaling/v1" || u.GetName() != "orders" {
		t.Fatalf("scale = %v", u.Object)
	}
	if n, _, _ := unstructuredInt(u.Object, "spec", "replicas"); n != 2 {
		t.Fatalf("spec.replicas = %d, want 2", n)
	}
	for _, p := range []struct {
		pt    types.PatchType
		body  string
		want  int64
		extra []metav1.PatchOptions
	}{
		{types.MergePatchType, `{"spec":{"replicas":4}}`, 4, nil},
		{types.JSONPatchType, `[{"op":"replace","path":"/spec/replicas","value":6}]`, 6, nil},
		{types.ApplyPatchType, `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"orders"},"spec":{"replicas":7}}`, 7,
			[]metav1.PatchOptions{{FieldManager: "hpa", Force: ptrTo(true)}}},
	} {
		opts := metav1.PatchOptions{}
		if len(p.extra) > 0 {
			opts = p.extra[0]
		}
		u, err := dyn.Patch(ctx, "orders", p.pt, []byte(p.body), opts, "scale")
		if err != nil {
			t.Fatalf("%s: %v", p.pt, err)
		}
		if n, _, _ := unstructuredInt(u.Object, "spec", "replicas"); n != p.want {
			t.Fatalf("%s: spec.replicas = %d, want %d", p.pt, n, p.want)
		}
		db, err := cs.ExampleV1().Databases("default").Get(ctx, "orders", metav1.GetOptions{})
		if err != nil || int64(db.Spec.Replicas) != p.want {
			t.Fatalf("%s: object's replicas = %d, %v", p.pt, db.Spec.Replicas, err)
		}
	}
	// Apply of a Scale owns the replicas with the Apply operation.
	db, err := cs.ExampleV1().Databases("default").Get(ctx, "orders", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range db.ManagedFields {
		found = found || e.Manager == "hpa" && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == "scale"
	}
	if !found {
		t.Fatalf("managed fields = %+v, want hpa applying through scale", db.ManagedFields)
	}
	if _, err := dyn.Patch(ctx, "orders", types.StrategicMergePatchType, []byte(`{"spec":{"replicas":1}}`), metav1.PatchOptions{}, "scale"); !apierrors.IsUnsupportedMediaType(err) ||
		!strings.Contains(err.Error(), "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml") {
		t.Fatalf("strategic merge patch of scale: err = %v, want 415 listing the three", err)
	}
	if _, err := dyn.Patch(ctx, "nope", types.ApplyPatchType, []byte(`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"nope"},"spec":{"replicas":1}}`),
		metav1.PatchOptions{FieldManager: "hpa"}, "scale"); !apierrors.IsNotFound(err) {
		t.Fatalf("apply to the scale of a missing object: err = %v, want 404 (never a create)", err)
	}
}

// TestScaleBadInput checks the answers to bad writes through /scale,
// compared with kube-apiserver v1.37 serving a CRD of the same schema, and
// that none of them changes the object.
func TestScaleBadInput(t *testing.T) {
	_, cs := startServer(t)
	ctx := t.Context()
	before := createDatabase(t, cs, "orders", 2)
	rc := cs.ExampleV1().RESTClient()
	path := "/apis/example.apiloom.dev/v1/namespaces/default/databases/orders/scale"

	for _, c := range []struct {
		name, method, contentType, body string
		code                            int32
		reason                          metav1.StatusReason
		msg                             string
	}{
		// Upstream's schema says minimum 1 first; then its scale check.
		{"negative replicas", http.MethodPut, "application/json", `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"orders"},"spec":{"replicas":-1}}`,
			422, metav1.StatusReasonInvalid, `.spec.replicas: Invalid value: -1: should be a non-negative integer`},
		{"negative replicas by patch", http.MethodPatch, "application/merge-patch+json", `{"spec":{"replicas":-3}}`,
			422, metav1.StatusReasonInvalid, `.spec.replicas: Invalid value: -3: should be a non-negative integer`},
		{"another kind", http.MethodPut, "application/json", `{"apiVersion":"example.apiloom.dev/v1","kind":"Database","metadata":{"name":"orders"},"spec":{"replicas":4}}`,
			400, metav1.StatusReasonBadRequest, `no kind is registered for the type v1.Scale in scheme "pkg/runtime/scheme.go:111"`},
		{"not JSON", http.MethodPut, "application/json", `{"spec":`,
			400, metav1.StatusReasonBadRequest, `no kind is registered for the type v1.Scale in scheme "pkg/runtime/scheme.go:111"`},
		{"replicas a string", http.MethodPut, "application/json", `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"orders"},"spec":{"replicas":"4"}}`,
			400, metav1.StatusReasonBadRequest, `no kind is registered for the type v1.Scale in scheme "pkg/runtime/scheme.go:111"`},
		{"other name", http.MethodPut, "application/json", `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"x"},"spec":{"replicas":4}}`,
			400, metav1.StatusReasonBadRequest, "the name of the object (x) does not match the name on the URL (orders)"},
		{"patched to another kind", http.MethodPatch, "application/merge-patch+json", `{"kind":"Database"}`,
			422, metav1.StatusReasonInvalid, `: no kind "Database" is registered for version "autoscaling/v1" in scheme "pkg/runtime/scheme.go:111"`},
		{"stale resourceVersion", http.MethodPatch, "application/merge-patch+json", `{"metadata":{"resourceVersion":"1"},"spec":{"replicas":4}}`,
			409, metav1.StatusReasonConflict, `Operation cannot be fulfilled on databases.example.apiloom.dev "orders": the object has been modified`},
		{"delete", http.MethodDelete, "", ``,
			405, metav1.StatusReasonMethodNotAllowed, `delete is not supported on resources of kind "databases.example.apiloom.dev"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := rc.Verb(c.method).AbsPath(path)
			if c.body != "" {
				req = req.SetHeader("Content-Type", c.contentType).Body([]byte(c.body))
			}
			err := req.Do(ctx).Error()
			checkStatusContains(t, c.name, err, c.code, c.reason, c.msg)
		})
	}
	after, err := cs.ExampleV1().Databases("default").Get(ctx, "orders", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != before.ResourceVersion {
		t.Fatalf("a refused write changed the object: %+v", after)
	}

	// The Scale's checks hold for every write of the object, as for a CRD.
	after.Status.Replicas = -2
	_, err = cs.ExampleV1().Databases("default").UpdateStatus(ctx, after, metav1.UpdateOptions{})
	checkStatusContains(t, "negative status replicas", err, 422, metav1.StatusReasonInvalid, `.status.replicas: Invalid value: -2: should be a non-negative integer`)
	_, err = cs.ExampleV1().Databases("default").Create(ctx, &examplev1.Database{
		ObjectMeta: metav1.ObjectMeta{Name: "negative"},
		Spec:       examplev1.DatabaseSpec{Engine: "postgres", Replicas: -1},
	}, metav1.CreateOptions{})
	checkStatusContains(t, "create with negative replicas", err, 422, metav1.StatusReasonInvalid, `.spec.replicas: Invalid value: -1: should be a non-negative integer`)
}

// TestKubectlScale runs `kubectl scale` and `kubectl get --subresource=scale`.
func TestKubectlScale(t *testing.T) {
	requireKubectl(t)
	ts, cs := startServer(t)
	createDatabase(t, cs, "orders", 1)
	k := &kubectlEnv{t: t, kubeconfig: ts.Kubeconfig, home: t.TempDir()}

	if out := k.run("scale", "db", "orders", "-n", "default", "--replicas=3"); !strings.Contains(out, "database.example.apiloom.dev/orders scaled") {
		t.Fatalf("kubectl scale: %s", out)
	}
	db, err := cs.ExampleV1().Databases("default").Get(context.Background(), "orders", metav1.GetOptions{})
	if err != nil || db.Spec.Replicas != 3 || db.Generation != 2 {
		t.Fatalf("after kubectl scale: replicas %d, generation %d, %v", db.Spec.Replicas, db.Generation, err)
	}
	// --current-replicas is a precondition kubectl checks against the Scale.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	out, err := k.cmd(ctx, "scale", "db", "orders", "-n", "default", "--current-replicas=1", "--replicas=5").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Expected replicas to be 1, was 3") {
		t.Fatalf("kubectl scale --current-replicas=1: %v\n%s", err, out)
	}
	expectTable(t, k.run("get", "db", "orders", "-n", "default", "--subresource=scale"),
		[]string{"NAME", "DESIRED", "AVAILABLE", "AGE"},
		[]string{"orders", "3", "0"})
	if out := k.run("get", "db", "orders", "-n", "default", "--subresource=scale", "-o", "jsonpath={.kind} {.spec.replicas}"); out != "Scale 3" {
		t.Fatalf("kubectl get --subresource=scale -o jsonpath: %q", out)
	}
}

// checkStatusContains fails the test unless err is an API error with code
// and reason whose message contains msg. The message of a 422 also holds
// the schema's violations, which are not the scale subresource's.
func checkStatusContains(t *testing.T, what string, err error, code int32, reason metav1.StatusReason, msg string) {
	t.Helper()
	st, ok := err.(apierrors.APIStatus)
	if !ok {
		t.Fatalf("%s: %v, want a %d Status", what, err, code)
	}
	s := st.Status()
	if s.Code != code || s.Reason != reason || !strings.Contains(s.Message, msg) {
		t.Errorf("%s: %d %s %q\nwant %d %s containing %q", what, s.Code, s.Reason, s.Message, code, reason, msg)
	}
}

func unstructuredInt(obj map[string]any, fields ...string) (int64, bool, error) {
	var cur any = obj
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return 0, false, nil
		}
		cur = m[f]
	}
	n, ok := cur.(int64)
	return n, ok, nil
}

func ptrTo[T any](v T) *T { return &v }
