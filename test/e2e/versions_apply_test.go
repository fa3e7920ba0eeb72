package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev2alpha1 "github.com/apiloom/apiloom/apis/example/v2alpha1"
	acv1 "github.com/apiloom/apiloom/generated/applyconfigurations/example/v1"
	acv2 "github.com/apiloom/apiloom/generated/applyconfigurations/example/v2alpha1"
	"github.com/apiloom/apiloom/generated/clientset/versioned"
)

// The tests below hold managed fields across the two versions of Database,
// whose v2alpha1 spec.engineVersion is v1's spec.version. kube-apiserver's
// field manager converts the objects into the version each manager's entry
// was recorded in before it compares them (structured-merge-diff asks its
// version converter), so ownership of a renamed field is one ownership:
// the same code serves a CRD with several versions.

// entry is manager's managed fields entry in obj, nil without one.
func entry(obj metav1.Object, manager string) *metav1.ManagedFieldsEntry {
	for _, e := range obj.GetManagedFields() {
		if e.Manager == manager {
			return &e
		}
	}
	return nil
}

// conflictCauses are the FieldManagerConflict causes of err as
// "message at field".
func conflictCauses(t *testing.T, err error) []string {
	t.Helper()
	var status apierrors.APIStatus
	if !apierrors.IsConflict(err) || !asStatus(err, &status) || status.Status().Details == nil {
		t.Fatalf("want a 409 Conflict with causes, got %v", err)
	}
	var out []string
	for _, c := range status.Status().Details.Causes {
		if c.Type != metav1.CauseTypeFieldManagerConflict {
			t.Fatalf("cause %+v", c)
		}
		out = append(out, c.Message+" at "+c.Field)
	}
	return out
}

func asStatus(err error, out *apierrors.APIStatus) bool {
	s, ok := err.(apierrors.APIStatus)
	*out = s
	return ok
}

// createApplied creates orders through v2alpha1 by manager a's apply of
// engine and engineVersion.
func createApplied(t *testing.T, cs versioned.Interface) *examplev2alpha1.Database {
	t.Helper()
	db, err := cs.ExampleV2alpha1().Databases("default").Apply(t.Context(),
		acv2.Database("orders", "default").WithSpec(acv2.DatabaseSpec().WithEngine("postgres").WithEngineVersion("16.4")),
		metav1.ApplyOptions{FieldManager: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if e := entry(db, "a"); e == nil || e.APIVersion != "example.apiloom.dev/v2alpha1" || !strings.Contains(string(e.FieldsV1.Raw), `"f:engineVersion"`) {
		t.Fatalf("a's entry %+v", e)
	}
	return db
}

// TestVersionsApplyConflict: manager a applies spec.engineVersion through
// v2alpha1; manager b's apply of another spec.version through v1 is the
// 409 a CRD answers, its cause naming a and the field in a's version (the
// path structured-merge-diff finds in a's entry); nothing changes. The
// same value shares the field; force takes it over, and each entry keeps
// the apiVersion it was written through.
func TestVersionsApplyConflict(t *testing.T) {
	_, cs := startServer(t)
	ctx := t.Context()
	v1dbs := cs.ExampleV1().Databases("default")
	created := createApplied(t, cs)

	_, err := v1dbs.Apply(ctx, acv1.Database("orders", "default").WithSpec(acv1.DatabaseSpec().WithVersion("17.0")),
		metav1.ApplyOptions{FieldManager: "b"})
	if got := conflictCauses(t, err); len(got) != 1 || got[0] != `conflict with "a" at .spec.engineVersion` {
		t.Fatalf("causes %q", got)
	}
	if want := `Apply failed with 1 conflict: conflict with "a": .spec.engineVersion`; !strings.Contains(err.Error(), want) {
		t.Fatalf("message %q, want %q", err.Error(), want)
	}
	db, err := v1dbs.Get(ctx, "orders", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if db.Spec.Version != "16.4" || db.ResourceVersion != created.ResourceVersion {
		t.Fatalf("after the refused apply: version %q rv %s (created %s)", db.Spec.Version, db.ResourceVersion, created.ResourceVersion)
	}

	// The value already there: both own it, each in its own version.
	db, err = v1dbs.Apply(ctx, acv1.Database("orders", "default").WithSpec(acv1.DatabaseSpec().WithVersion("16.4")),
		metav1.ApplyOptions{FieldManager: "b"})
	if err != nil {
		t.Fatal(err)
	}
	a, b := entry(db, "a"), entry(db, "b")
	if a == nil || a.APIVersion != "example.apiloom.dev/v2alpha1" || !strings.Contains(string(a.FieldsV1.Raw), `"f:engineVersion"`) ||
		b == nil || b.APIVersion != "example.apiloom.dev/v1" || !strings.Contains(string(b.FieldsV1.Raw), `"f:version"`) {
		t.Fatalf("shared: a %+v, b %+v", a, b)
	}

	// Another value with force: b takes the field from a.
	db, err = v1dbs.Apply(ctx, acv1.Database("orders", "default").WithSpec(acv1.DatabaseSpec().WithVersion("17.0")),
		metav1.ApplyOptions{FieldManager: "b", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	a, b = entry(db, "a"), entry(db, "b")
	if db.Spec.Version != "17.0" || a == nil || a.APIVersion != "example.apiloom.dev/v2alpha1" || strings.Contains(string(a.FieldsV1.Raw), "engineVersion") ||
		!strings.Contains(string(a.FieldsV1.Raw), `"f:engine"`) || b == nil || b.APIVersion != "example.apiloom.dev/v1" {
		t.Fatalf("forced: version %q, a %+v, b %+v", db.Spec.Version, a, b)
	}

	// And back the other way: a's apply of its old value through v2alpha1
	// now conflicts with b, at b's path.
	_, err = cs.ExampleV2alpha1().Databases("default").Apply(ctx,
		acv2.Database("orders", "default").WithSpec(acv2.DatabaseSpec().WithEngine("postgres").WithEngineVersion("16.4")),
		metav1.ApplyOptions{FieldManager: "a"})
	if got := conflictCauses(t, err); len(got) != 1 || got[0] != `conflict with "b" at .spec.version` {
		t.Fatalf("causes %q", got)
	}
}

// TestVersionsUpdateAndApply: an update through one version takes over the
// fields it changes from an applier of the other, and an apply through one
// version conflicts with an update through the other, named as upstream
// names an updater ("editor" using its apiVersion).
func TestVersionsUpdateAndApply(t *testing.T) {
	_, cs := startServer(t)
	ctx := t.Context()
	v1dbs := cs.ExampleV1().Databases("default")
	createApplied(t, cs)

	db, err := v1dbs.Get(ctx, "orders", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	db.Spec.Version = "17.0"
	db, err = v1dbs.Update(ctx, db, metav1.UpdateOptions{FieldManager: "editor"})
	if err != nil {
		t.Fatal(err)
	}
	a, ed := entry(db, "a"), entry(db, "editor")
	if a == nil || strings.Contains(string(a.FieldsV1.Raw), "engineVersion") || ed == nil || ed.APIVersion != "example.apiloom.dev/v1" ||
		ed.Operation != metav1.ManagedFieldsOperationUpdate || !strings.Contains(string(ed.FieldsV1.Raw), `"f:version"`) {
		t.Fatalf("after the v1 update: a %+v, editor %+v", a, ed)
	}

	_, err = cs.ExampleV2alpha1().Databases("default").Apply(ctx,
		acv2.Database("orders", "default").WithSpec(acv2.DatabaseSpec().WithEngine("postgres").WithEngineVersion("16.4")),
		metav1.ApplyOptions{FieldManager: "a"})
	if got := conflictCauses(t, err); len(got) != 1 || !strings.HasPrefix(got[0], `conflict with "editor" using example.apiloom.dev/v1 at `) ||
		!strings.HasSuffix(got[0], " at .spec.version") {
		t.Fatalf("causes %q", got)
	}
}

// TestVersionsScaleKeepsManagedFields: a write through v2alpha1's /scale
// keeps the entries recorded through v1, and takes spec.replicas from v1's
// applier, as kube-apiserver maps the replicas path of every version of a
// CRD for its scale subresource.
func TestVersionsScaleKeepsManagedFields(t *testing.T) {
	_, cs := startServer(t)
	ctx := t.Context()
	v1dbs := cs.ExampleV1().Databases("default")
	db, err := v1dbs.Apply(ctx, acv1.Database("orders", "default").WithSpec(acv1.DatabaseSpec().WithEngine("postgres").WithReplicas(2)),
		metav1.ApplyOptions{FieldManager: "deployer"})
	if err != nil {
		t.Fatal(err)
	}
	scale, err := json.Marshal(&autoscalingv1.Scale{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "Scale"},
		ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: "default", ResourceVersion: db.ResourceVersion},
		Spec:       autoscalingv1.ScaleSpec{Replicas: 3},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.ExampleV2alpha1().RESTClient().Put().Namespace("default").Resource("databases").Name("orders").SubResource("scale").
		Param("fieldManager", "autoscaler").Body(scale).Do(ctx).Error(); err != nil {
		t.Fatal(err)
	}
	db, err = v1dbs.Get(ctx, "orders", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d, s := entry(db, "deployer"), entry(db, "autoscaler")
	if db.Spec.Replicas != 3 || d == nil || !strings.Contains(string(d.FieldsV1.Raw), `"f:engine"`) || strings.Contains(string(d.FieldsV1.Raw), "replicas") ||
		s == nil || s.Subresource != "scale" || s.APIVersion != "example.apiloom.dev/v2alpha1" {
		t.Fatalf("after scaling through v2alpha1: replicas %d, deployer %+v, autoscaler %+v", db.Spec.Replicas, d, s)
	}
}

// TestVersionsUnservedManagedFields: an entry recorded in a version the
// kind does not serve (as after a version is removed) is dropped by the
// write that meets it instead of failing it, as kube-apiserver's field
// manager does for a built-in kind whose scheme lacks the version.
func TestVersionsUnservedManagedFields(t *testing.T) {
	_, cs := startServer(t)
	ctx := t.Context()
	v1dbs := cs.ExampleV1().Databases("default")
	db := createApplied(t, cs)
	mf := db.ManagedFields[0]
	mf.Manager, mf.APIVersion = "old", "example.apiloom.dev/v9"
	asV1, err := v1dbs.Get(ctx, "orders", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	asV1.ManagedFields = append(asV1.ManagedFields, mf)
	asV1.Spec.Engine = "mysql"
	asV1, err = v1dbs.Update(ctx, asV1, metav1.UpdateOptions{FieldManager: "editor"})
	if err != nil {
		t.Fatal(err)
	}
	if entry(asV1, "old") != nil || entry(asV1, "a") == nil || entry(asV1, "editor") == nil || asV1.Spec.Engine != "mysql" {
		t.Fatalf("after the update: %+v", asV1.ManagedFields)
	}
}
