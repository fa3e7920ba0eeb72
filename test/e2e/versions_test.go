package e2e

import (
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	examplev2alpha1 "github.com/apiloom/apiloom/apis/example/v2alpha1"
)

// TestVersionsReadEachOther: a Database written as v2alpha1 reads as v1
// (stored as v1: engineVersion is v1's version, backupSchedule, which v1
// lacks, is in its annotation), and back as v2alpha1 unchanged; one
// written as v1 reads as v2alpha1. Both versions are one object: one
// resourceVersion, one uid, updates through either seen by the other,
// and an update through v1 keeps the v2alpha1-only field.
func TestVersionsReadEachOther(t *testing.T) {
	_, cs := startServer(t)
	ctx := t.Context()
	v1dbs, v2dbs := cs.ExampleV1().Databases("default"), cs.ExampleV2alpha1().Databases("default")

	created, err := v2dbs.Create(ctx, &examplev2alpha1.Database{
		ObjectMeta: metav1.ObjectMeta{Name: "orders", Labels: map[string]string{"app": "orders"}},
		Spec: examplev2alpha1.DatabaseSpec{
			Engine: "postgres", EngineVersion: "16.4", Replicas: 2, BackupSchedule: "0 3 * * *",
			Users: []examplev2alpha1.DatabaseUser{{Name: "app", Privilege: "write"}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.Spec.EngineVersion != "16.4" || created.Spec.BackupSchedule != "0 3 * * *" ||
		created.Spec.StorageGiB != 10 || created.Annotations[examplev2alpha1.BackupScheduleAnnotation] != "" {
		t.Fatalf("created: %+v %v", created.Spec, created.Annotations)
	}

	asV1, err := v1dbs.Get(ctx, "orders", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if asV1.Spec.Version != "16.4" || asV1.Spec.Engine != "postgres" || asV1.Spec.Replicas != 2 || len(asV1.Spec.Users) != 1 ||
		asV1.Annotations[examplev2alpha1.BackupScheduleAnnotation] != "0 3 * * *" ||
		asV1.UID != created.UID || asV1.ResourceVersion != created.ResourceVersion || asV1.Labels["app"] != "orders" {
		t.Fatalf("read as v1: %+v %v (uid %s rv %s, created %s %s)", asV1.Spec, asV1.Annotations, asV1.UID, asV1.ResourceVersion, created.UID, created.ResourceVersion)
	}

	// An update through v1 that knows nothing of backupSchedule keeps it.
	asV1.Spec.Version = "17.0"
	asV1.Spec.StorageGiB = 20
	updated, err := v1dbs.Update(ctx, asV1, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	back, err := v2dbs.Get(ctx, "orders", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if back.Spec.EngineVersion != "17.0" || back.Spec.StorageGiB != 20 || back.Spec.BackupSchedule != "0 3 * * *" ||
		back.ResourceVersion != updated.ResourceVersion || len(back.Annotations) != 0 || back.Generation != 2 {
		t.Fatalf("read back as v2alpha1: %+v %v rv %s (updated %s) generation %d", back.Spec, back.Annotations, back.ResourceVersion, updated.ResourceVersion, back.Generation)
	}

	// The schema of the version written applies: v2alpha1's
	// backupSchedule has a maxLength v1 knows nothing of; v1's transition
	// rule on storageGiB holds through v2alpha1 too (its own copy).
	back.Spec.BackupSchedule = string(make([]byte, 65))
	if _, err := v2dbs.Update(ctx, back, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Fatalf("over-long backupSchedule through v2alpha1: %v, want Invalid", err)
	}
	back.Spec.BackupSchedule = "@daily"
	back.Spec.StorageGiB = 5
	if _, err := v2dbs.Update(ctx, back, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Fatalf("shrinking storageGiB through v2alpha1: %v, want Invalid", err)
	}

	// Written as v1, read as v2alpha1.
	if _, err := v1dbs.Create(ctx, &examplev1.Database{
		ObjectMeta: metav1.ObjectMeta{Name: "billing"},
		Spec:       examplev1.DatabaseSpec{Engine: "mysql", Version: "8.4"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	b, err := v2dbs.Get(ctx, "billing", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Spec.EngineVersion != "8.4" || b.Spec.BackupSchedule != "" {
		t.Fatalf("v1 object read as v2alpha1: %+v", b.Spec)
	}

	// Deleting through one version deletes the object.
	if err := v2dbs.Delete(ctx, "billing", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := v1dbs.Get(ctx, "billing", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get as v1 after delete as v2alpha1: %v", err)
	}
}

// TestVersionsListAndWatch: lists in both versions show the same objects
// converted, at the same resourceVersion, and a watcher per version,
// both open at once, sees the same events in its own version.
func TestVersionsListAndWatch(t *testing.T) {
	_, cs := startServer(t)
	ctx := t.Context()
	v1dbs, v2dbs := cs.ExampleV1().Databases("default"), cs.ExampleV2alpha1().Databases("default")

	if _, err := v1dbs.Create(ctx, &examplev1.Database{
		ObjectMeta: metav1.ObjectMeta{Name: "a"},
		Spec:       examplev1.DatabaseSpec{Engine: "postgres", Version: "15"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	l1, err := v1dbs.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l2, err := v2dbs.List(ctx, metav1.ListOptions{ResourceVersion: l1.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	if err != nil {
		t.Fatal(err)
	}
	if len(l1.Items) != 1 || len(l2.Items) != 1 || l2.Items[0].Spec.EngineVersion != "15" || l2.ResourceVersion != l1.ResourceVersion {
		t.Fatalf("lists: v1 %+v, v2alpha1 %+v", l1, l2)
	}

	w1, err := v1dbs.Watch(ctx, metav1.ListOptions{ResourceVersion: l1.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w1.Stop()
	w2, err := v2dbs.Watch(ctx, metav1.ListOptions{ResourceVersion: l1.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Stop()

	if _, err := v2dbs.Create(ctx, &examplev2alpha1.Database{
		ObjectMeta: metav1.ObjectMeta{Name: "b"},
		Spec:       examplev2alpha1.DatabaseSpec{Engine: "mysql", EngineVersion: "8.4", BackupSchedule: "@daily"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	b, err := v1dbs.Get(ctx, "b", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b.Spec.Version = "9.0"
	if _, err := v1dbs.Update(ctx, b, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := v1dbs.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	type seen struct {
		typ, name, version, backups string
	}
	want := []seen{{"ADDED", "b", "8.4", "@daily"}, {"MODIFIED", "b", "9.0", "@daily"}, {"DELETED", "a", "15", ""}}
	for _, w := range []struct {
		name string
		w    watch.Interface
		read func(runtime.Object) seen
	}{
		{"v1", w1, func(o runtime.Object) seen {
			d := o.(*examplev1.Database)
			return seen{name: d.Name, version: d.Spec.Version, backups: d.Annotations[examplev2alpha1.BackupScheduleAnnotation]}
		}},
		{"v2alpha1", w2, func(o runtime.Object) seen {
			d := o.(*examplev2alpha1.Database)
			if len(d.Annotations) != 0 {
				t.Errorf("v2alpha1 %s has annotations %v", d.Name, d.Annotations)
			}
			return seen{name: d.Name, version: d.Spec.EngineVersion, backups: d.Spec.BackupSchedule}
		}},
	} {
		for i, exp := range want {
			select {
			case ev := <-w.w.ResultChan():
				got := w.read(ev.Object)
				got.typ = string(ev.Type)
				if got != exp {
					t.Fatalf("%s watcher event %d: %+v, want %+v", w.name, i, got, exp)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("%s watcher: no event %d", w.name, i)
			}
		}
	}
}

// TestVersionsDiscovery: the group lists both versions, v1 preferred (a
// CRD's group prefers its highest-priority version, kube-aware sort), and
// databases in each carries the storage version's hash, the same in both
// (as kube-apiserver's discovery of a CRD), and its subresources.
func TestVersionsDiscovery(t *testing.T) {
	_, cs := startServer(t)
	groups, err := cs.Discovery().ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, g := range groups.Groups {
		if g.Name != "example.apiloom.dev" {
			continue
		}
		found = true
		if g.PreferredVersion.Version != "v1" || len(g.Versions) != 2 || g.Versions[0].Version != "v1" || g.Versions[1].Version != "v2alpha1" {
			t.Fatalf("group %+v", g)
		}
	}
	if !found {
		t.Fatal("no example.apiloom.dev group")
	}
	hashes := map[string]string{}
	for _, v := range []string{"v1", "v2alpha1"} {
		l, err := cs.Discovery().ServerResourcesForGroupVersion("example.apiloom.dev/" + v)
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, r := range l.APIResources {
			names[r.Name] = true
			if r.Name == "databases" {
				hashes[v] = r.StorageVersionHash
			}
		}
		if !names["databases"] || !names["databases/status"] || !names["databases/scale"] {
			t.Fatalf("%s resources %v", v, names)
		}
	}
	if hashes["v1"] == "" || hashes["v1"] != hashes["v2alpha1"] {
		t.Fatalf("storage version hashes %v, want one, the same", hashes)
	}
}
