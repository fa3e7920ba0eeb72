package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/dynamic"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	acv1 "github.com/apiloom/apiloom/generated/applyconfigurations/example/v1"
)

// Server-side apply end to end, through every client people apply with.
// Each expectation is what kube-apiserver v1.37 does for the same
// requests (docs/server-side-apply.md says how that was checked).

// managers is "manager/operation[/subresource]" for each managed fields
// entry of obj, sorted.
func managers(obj metav1.Object) []string {
	var out []string
	for _, e := range obj.GetManagedFields() {
		s := e.Manager + "/" + string(e.Operation)
		if e.Subresource != "" {
			s += "/" + e.Subresource
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// owned is the FieldsV1 of manager's entry in obj ("" without one).
func owned(obj metav1.Object, manager string) string {
	for _, e := range obj.GetManagedFields() {
		if e.Manager == manager && e.FieldsV1 != nil {
			return string(e.FieldsV1.Raw)
		}
	}
	return ""
}

// condition is a status condition's apply configuration.
func condition(typ, status string) *metav1ac.ConditionApplyConfiguration {
	return metav1ac.Condition().WithType(typ).WithStatus(metav1.ConditionStatus(status)).WithReason("Test").
		WithMessage("set by " + typ).WithLastTransitionTime(metav1.NewTime(time.Unix(1700000000, 0)))
}

func TestKubectlServerSideApply(t *testing.T) {
	requireKubectl(t)
	ts, _ := startServer(t)
	k := &kubectlEnv{t: t, kubeconfig: ts.Kubeconfig, home: t.TempDir()}
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}

	// Create.
	out := k.run("apply", "--server-side", "-f", examples)
	if !strings.Contains(out, "database.example.apiloom.dev/orders serverside-applied") || !strings.Contains(out, "region.example.apiloom.dev/eu-central serverside-applied") {
		t.Fatalf("first apply:\n%s", out)
	}
	// Update by the same manager.
	orig, err := os.ReadFile(filepath.Join(examples, "database-orders.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	changed := filepath.Join(t.TempDir(), "orders.yaml")
	if err := os.WriteFile(changed, []byte(strings.Replace(string(orig), `"16.4"`, `"17.2"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	k.run("apply", "--server-side", "-f", changed)
	if got := k.run("get", "db", "orders", "-n", "default", "-o", "jsonpath={.spec.version}"); got != "17.2" {
		t.Fatalf("version after apply: %q", got)
	}

	// A second manager that sets replicas conflicts with kubectl, which
	// owns them: kubectl exits 1 and prints the conflict as upstream's.
	ops := filepath.Join(t.TempDir(), "ops.yaml")
	if err := os.WriteFile(ops, []byte("apiVersion: example.apiloom.dev/v1\nkind: Database\nmetadata: {name: orders, namespace: default}\nspec: {replicas: 5}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	conflict, err := k.cmd(ctx, "apply", "--server-side", "--field-manager=ops", "-f", ops).CombinedOutput()
	if err == nil || !strings.Contains(string(conflict), `Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas`) ||
		!strings.Contains(string(conflict), "--force-conflicts") {
		t.Fatalf("conflicting apply: %v\n%s", err, conflict)
	}
	out = k.run("apply", "--server-side", "--field-manager=ops", "--force-conflicts", "-f", ops)
	if !strings.Contains(out, "serverside-applied") {
		t.Fatalf("forced apply:\n%s", out)
	}

	// get --show-managed-fields shows both managers and what each owns.
	out = k.run("get", "db", "orders", "-n", "default", "-o", "yaml", "--show-managed-fields")
	for _, want := range []string{"managedFields:", "manager: kubectl", "manager: ops", "operation: Apply", "f:replicas: {}", "f:engine: {}", "replicas: 5"} {
		if !strings.Contains(out, want) {
			t.Fatalf("get --show-managed-fields lacks %q:\n%s", want, out)
		}
	}
	if out = k.run("get", "db", "orders", "-n", "default", "-o", "yaml"); strings.Contains(out, "managedFields") {
		t.Fatalf("kubectl hides managed fields unless asked:\n%s", out)
	}
	// A server-side dry run changes nothing.
	k.run("apply", "--server-side", "--field-manager=ops", "--dry-run=server", "-f", changed)
	if got := k.run("get", "db", "orders", "-n", "default", "-o", "jsonpath={.spec.replicas}"); got != "5" {
		t.Fatalf("dry run changed replicas to %q", got)
	}
}

func TestClientsetApply(t *testing.T) {
	ts, cs := startServer(t)
	ts.CreateNamespaces(t, "shop")
	ctx := t.Context()
	dbs := cs.ExampleV1().Databases("shop")

	// Apply creates; the manager owns what it applied, and the fields the
	// type's defaults fill are owned by no one.
	db, err := dbs.Apply(ctx, acv1.Database("orders", "shop").WithLabels(map[string]string{"team": "checkout"}).
		WithSpec(acv1.DatabaseSpec().WithEngine("postgres").WithVersion("16.4")), metav1.ApplyOptions{FieldManager: "deployer"})
	if err != nil {
		t.Fatal(err)
	}
	if db.Spec.Replicas != 1 || db.Spec.StorageGiB != 10 || db.Generation != 1 {
		t.Fatalf("created %+v", db)
	}
	if got := owned(db, "deployer"); got != `{"f:metadata":{"f:labels":{"f:team":{}}},"f:spec":{"f:engine":{},"f:version":{}}}` {
		t.Fatalf("deployer owns %s", got)
	}

	// Two controllers each apply their own condition: a +listType=map list
	// keyed by type merges them, each owning its entry.
	if _, err := dbs.ApplyStatus(ctx, acv1.Database("orders", "shop").WithStatus(acv1.DatabaseStatus().
		WithPhase("Ready").WithConditions(condition("Ready", "True"))), metav1.ApplyOptions{FieldManager: "provisioner"}); err != nil {
		t.Fatal(err)
	}
	db, err = dbs.ApplyStatus(ctx, acv1.Database("orders", "shop").WithStatus(acv1.DatabaseStatus().
		WithConditions(condition("Backup", "False"))), metav1.ApplyOptions{FieldManager: "backup"})
	if err != nil {
		t.Fatal(err)
	}
	if len(db.Status.Conditions) != 2 || db.Status.Phase != "Ready" {
		t.Fatalf("status %+v", db.Status)
	}
	if want := []string{"backup/Apply/status", "deployer/Apply", "provisioner/Apply/status"}; !slices.Equal(managers(db), want) {
		t.Fatalf("managers %v, want %v", managers(db), want)
	}
	if got := owned(db, "backup"); !strings.Contains(got, `"k:{\"type\":\"Backup\"}"`) || strings.Contains(got, "Ready") {
		t.Fatalf("backup owns %s", got)
	}
	// The provisioner drops its condition: Backup stays.
	db, err = dbs.ApplyStatus(ctx, acv1.Database("orders", "shop").WithStatus(acv1.DatabaseStatus().WithPhase("Ready")),
		metav1.ApplyOptions{FieldManager: "provisioner"})
	if err != nil {
		t.Fatal(err)
	}
	if len(db.Status.Conditions) != 1 || db.Status.Conditions[0].Type != "Backup" {
		t.Fatalf("conditions %+v", db.Status.Conditions)
	}

	// A conflict is an error that names the other manager; Force takes over.
	_, err = dbs.Apply(ctx, acv1.Database("orders", "shop").WithSpec(acv1.DatabaseSpec().WithVersion("17")), metav1.ApplyOptions{FieldManager: "upgrader"})
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), `conflict with "deployer": .spec.version`) {
		t.Fatalf("conflicting apply: %v", err)
	}
	db, err = dbs.Apply(ctx, acv1.Database("orders", "shop").WithSpec(acv1.DatabaseSpec().WithVersion("17")), metav1.ApplyOptions{FieldManager: "upgrader", Force: true})
	if err != nil || db.Spec.Version != "17" || db.Generation != 2 {
		t.Fatalf("forced apply: %v %+v", err, db)
	}

	// Extract gives back what a manager applied, from the managed fields.
	ac, err := acv1.ExtractDatabase(db, "deployer")
	if err != nil {
		t.Fatal(err)
	}
	if ac.Spec == nil || ac.Spec.Engine == nil || *ac.Spec.Engine != "postgres" || ac.Spec.Version != nil {
		t.Fatalf("extracted %+v", ac.Spec)
	}
	st, err := acv1.ExtractDatabaseStatus(db, "backup")
	if err != nil || st.Status == nil || len(st.Status.Conditions) != 1 || *st.Status.Conditions[0].Type != "Backup" {
		t.Fatalf("extracted status %+v: %v", st.Status, err)
	}

	// A +listType=set of a cluster-scoped kind.
	regions := cs.ExampleV1().Regions()
	if _, err := regions.Apply(ctx, acv1.Region("eu").WithSpec(acv1.RegionSpec().WithZones("a", "b")), metav1.ApplyOptions{FieldManager: "one"}); err != nil {
		t.Fatal(err)
	}
	rg, err := regions.Apply(ctx, acv1.Region("eu").WithSpec(acv1.RegionSpec().WithZones("c", "b")), metav1.ApplyOptions{FieldManager: "two"})
	if err != nil || !slices.Equal(rg.Spec.Zones, []string{"a", "c", "b"}) {
		t.Fatalf("zones %v: %v", rg.Spec.Zones, err)
	}
}

// TestApplyWatchEvents: watchers see the managed fields of every event, and
// an apply that changes nothing sends none.
func TestApplyWatchEvents(t *testing.T) {
	ts, cs := startServer(t)
	ts.CreateNamespaces(t, "w")
	ctx := t.Context()
	dbs := cs.ExampleV1().Databases("w")
	w, err := dbs.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	cfg := acv1.Database("a", "w").WithSpec(acv1.DatabaseSpec().WithEngine("mysql"))
	for range 2 { // the second is a no-op
		if _, err := dbs.Apply(ctx, cfg, metav1.ApplyOptions{FieldManager: "m"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := dbs.Apply(ctx, acv1.Database("a", "w").WithSpec(acv1.DatabaseSpec().WithEngine("mariadb")), metav1.ApplyOptions{FieldManager: "m"}); err != nil {
		t.Fatal(err)
	}
	var events []string
	for len(events) < 2 {
		select {
		case ev := <-w.ResultChan():
			db := ev.Object.(*examplev1.Database)
			if owned(db, "m") == "" {
				t.Fatalf("%s event without managed fields: %+v", ev.Type, db.ObjectMeta)
			}
			events = append(events, string(ev.Type)+" "+db.Spec.Engine)
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		}
	}
	// Had the no-op apply written, the second event would be a MODIFIED
	// that still says mysql.
	if want := []string{string(watch.Added) + " mysql", string(watch.Modified) + " mariadb"}; !slices.Equal(events, want) {
		t.Fatalf("events %v, want %v", events, want)
	}
}

func TestDynamicApply(t *testing.T) {
	ts, _ := startServer(t)
	ts.CreateNamespaces(t, "d")
	ctx := t.Context()
	dc := dynamic.NewForConfigOrDie(ts.Config)
	gvr := schema.GroupVersionResource{Group: "example.apiloom.dev", Version: "v1", Resource: "databases"}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.apiloom.dev/v1", "kind": "Database",
		"metadata": map[string]any{"name": "dyn", "namespace": "d"},
		"spec":     map[string]any{"engine": "postgres", "replicas": int64(2)},
	}}
	got, err := dc.Resource(gvr).Namespace("d").Apply(ctx, "dyn", obj, metav1.ApplyOptions{FieldManager: "dynamic"})
	if err != nil {
		t.Fatal(err)
	}
	if replicas, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas"); replicas != 2 || owned(got, "dynamic") == "" {
		t.Fatalf("applied %v", got.Object)
	}
	st := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.apiloom.dev/v1", "kind": "Database",
		"metadata": map[string]any{"name": "dyn", "namespace": "d"},
		"status":   map[string]any{"phase": "Provisioning"},
	}}
	got, err = dc.Resource(gvr).Namespace("d").ApplyStatus(ctx, "dyn", st, metav1.ApplyOptions{FieldManager: "dyn-status"})
	if err != nil {
		t.Fatal(err)
	}
	if phase, _, _ := unstructured.NestedString(got.Object, "status", "phase"); phase != "Provisioning" {
		t.Fatalf("status %v", got.Object["status"])
	}
	if want := []string{"dyn-status/Apply/status", "dynamic/Apply"}; !slices.Equal(managers(got), want) {
		t.Fatalf("managers %v, want %v", managers(got), want)
	}
	// The bad input of the issue, through a client: an apply without a
	// field manager is refused by the server (422), not sent blindly.
	_, err = dc.Resource(gvr).Namespace("d").Patch(ctx, "dyn", "application/apply-patch+yaml", []byte(`{"apiVersion":"example.apiloom.dev/v1","kind":"Database","metadata":{"name":"dyn"}}`), metav1.PatchOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "fieldManager: Required value: is required for apply patch") {
		t.Fatalf("apply without fieldManager: %v", err)
	}
}
