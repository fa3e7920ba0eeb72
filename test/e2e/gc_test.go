package e2e

import (
	"context"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The garbage collector (server/controllers/gc) end to end: every
// propagation policy over owners and dependents of built-in (ConfigMap)
// and example kinds (Database, cluster-scoped Region).

// TestGCBackground: deleting an owner (Background, the default) has its
// dependents collected, down a chain; a dependent with another owner left
// only loses its reference to the gone one.
func TestGCBackground(t *testing.T) {
	e := newGCEnv(t)
	ctx := t.Context()
	e.namespace("gc-bg")
	a := e.database("gc-bg", "a")
	b := e.configMap("gc-bg", "b", dbRef(a, false))
	e.database("gc-bg", "c", cmRef(b, false))
	other := e.configMap("gc-bg", "other")
	shared := e.configMap("gc-bg", "shared", dbRef(a, false), cmRef(other, false))

	if err := e.cs.ExampleV1().Databases("gc-bg").Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitCMGone("gc-bg", "b")
	e.waitDBGone("gc-bg", "c")
	eventually(t, "shared to lose its reference to a", func(ctx context.Context) (bool, error) {
		cm, err := e.getCM(ctx, "gc-bg", "shared")
		if err != nil || cm == nil {
			t.Fatalf("shared: %v (collected: %v)", err, cm == nil)
		}
		return slices.Equal(refUIDs(cm.OwnerReferences), []types.UID{other.UID}), nil
	})
	if got := e.mustCM("gc-bg", "shared"); got.UID != shared.UID {
		t.Fatalf("shared was replaced: %s", got.UID)
	}
}

// TestGCForeground: an owner deleted in the foreground stays, with the
// foregroundDeletion finalizer, until its blocking dependents are gone:
// down a chain, each link deleted in the foreground in turn.
func TestGCForeground(t *testing.T) {
	e := newGCEnv(t)
	ctx := t.Context()
	e.namespace("gc-fg")
	a := e.configMap("gc-fg", "a")
	b := e.database("gc-fg", "b", cmRef(a, true))
	e.configMap("gc-fg", "c", dbRef(b, true))
	e.configMap("gc-fg", "loose", cmRef(a, false)) // does not block a

	if err := e.kc.CoreV1().ConfigMaps("gc-fg").Delete(ctx, "a", policy(metav1.DeletePropagationForeground)); err != nil {
		t.Fatal(err)
	}
	e.waitCMGone("gc-fg", "a")
	// a went last: its blocking dependent b, and b's own, were gone first.
	if db, err := e.getDB(ctx, "gc-fg", "b"); db != nil || err != nil {
		t.Fatalf("b outlived its owner a: %v", err)
	}
	if cm, err := e.getCM(ctx, "gc-fg", "c"); cm != nil || err != nil {
		t.Fatalf("c outlived b's owner a: %v", err)
	}
	e.waitCMGone("gc-fg", "loose")
}

// TestGCForegroundWaits: the owner stays, marked, while a blocking
// dependent cannot go (a finalizer of its own), and goes once it has.
func TestGCForegroundWaits(t *testing.T) {
	e := newGCEnv(t)
	ctx := t.Context()
	e.namespace("gc-wait")
	owner := e.database("gc-wait", "owner")
	hold(t, e, e.configMap("gc-wait", "held", dbRef(owner, true)))
	if err := e.cs.ExampleV1().Databases("gc-wait").Delete(ctx, "owner", policy(metav1.DeletePropagationForeground)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the collector to delete held", func(ctx context.Context) (bool, error) {
		cm, err := e.getCM(ctx, "gc-wait", "held")
		return cm != nil && cm.DeletionTimestamp != nil, err
	})
	db, err := e.getDB(ctx, "gc-wait", "owner")
	if err != nil || db == nil || db.DeletionTimestamp == nil || !slices.Contains(db.Finalizers, metav1.FinalizerDeleteDependents) {
		t.Fatalf("owner while held is being deleted: %v %+v", err, db)
	}
	releaseHold(t, e, "gc-wait", "held")
	e.waitDBGone("gc-wait", "owner")
}

// releaseHold removes the finalizers of a ConfigMap.
func releaseHold(t *testing.T, e *gcEnv, ns, name string) {
	t.Helper()
	if _, err := e.kc.CoreV1().ConfigMaps(ns).Patch(t.Context(), name, types.MergePatchType,
		[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestGCOrphan: an owner deleted with Orphan (or orphanDependents) goes
// once its dependents no longer refer to it; they stay.
func TestGCOrphan(t *testing.T) {
	e := newGCEnv(t)
	ctx := t.Context()
	e.namespace("gc-orphan")
	for _, opts := range []metav1.DeleteOptions{policy(metav1.DeletePropagationOrphan), {OrphanDependents: new(true)}} {
		a := e.database("gc-orphan", "a")
		other := e.configMap("gc-orphan", "other")
		e.configMap("gc-orphan", "b", dbRef(a, true))
		e.database("gc-orphan", "c", dbRef(a, false), cmRef(other, false))
		if err := e.cs.ExampleV1().Databases("gc-orphan").Delete(ctx, "a", opts); err != nil {
			t.Fatal(err)
		}
		e.waitDBGone("gc-orphan", "a")
		if b := e.mustCM("gc-orphan", "b"); len(b.OwnerReferences) != 0 {
			t.Fatalf("b still refers to %+v", b.OwnerReferences)
		}
		c, err := e.getDB(ctx, "gc-orphan", "c")
		if err != nil || c == nil || !slices.Equal(refUIDs(c.OwnerReferences), []types.UID{other.UID}) {
			t.Fatalf("c: %v %+v", err, c)
		}
		for _, del := range []func() error{
			func() error { return e.kc.CoreV1().ConfigMaps("gc-orphan").Delete(ctx, "b", metav1.DeleteOptions{}) },
			func() error {
				return e.kc.CoreV1().ConfigMaps("gc-orphan").Delete(ctx, "other", metav1.DeleteOptions{})
			},
		} {
			if err := del(); err != nil {
				t.Fatal(err)
			}
		}
		e.waitDBGone("gc-orphan", "c") // its remaining owner went
	}
}

// TestGCCycle: owners that own each other are collected, in the foreground
// (each blocking the other) and in the background.
func TestGCCycle(t *testing.T) {
	e := newGCEnv(t)
	ctx := t.Context()
	e.namespace("gc-cycle")
	cycle := func(x, y string, block bool) {
		a := e.configMap("gc-cycle", x)
		b := e.database("gc-cycle", y, cmRef(a, block))
		a.OwnerReferences = []metav1.OwnerReference{dbRef(b, block)}
		if _, err := e.kc.CoreV1().ConfigMaps("gc-cycle").Update(ctx, a, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cycle("fg-a", "fg-b", true)
	if err := e.kc.CoreV1().ConfigMaps("gc-cycle").Delete(ctx, "fg-a", policy(metav1.DeletePropagationForeground)); err != nil {
		t.Fatal(err)
	}
	e.waitCMGone("gc-cycle", "fg-a")
	e.waitDBGone("gc-cycle", "fg-b")

	cycle("bg-a", "bg-b", false)
	if err := e.kc.CoreV1().ConfigMaps("gc-cycle").Delete(ctx, "bg-a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitDBGone("gc-cycle", "bg-b")
}

// TestGCDanglingReferences: a dependent whose owner never existed, or
// exists with another UID, or (namespaced) only in another namespace, is
// collected; the objects it named are not.
func TestGCDanglingReferences(t *testing.T) {
	e := newGCEnv(t)
	ctx := t.Context()
	e.namespace("gc-dangle")
	e.namespace("gc-dangle-2")
	e.configMap("gc-dangle", "missing", metav1.OwnerReference{APIVersion: "example.apiloom.dev/v1", Kind: "Database", Name: "nobody", UID: "0badc0de-0000-0000-0000-000000000000"})
	real := e.database("gc-dangle", "real")
	wrong := dbRef(real, false)
	wrong.UID = "0badc0de-0000-0000-0000-000000000001"
	e.configMap("gc-dangle", "wrong-uid", wrong)
	elsewhere := e.configMap("gc-dangle", "elsewhere")
	e.configMap("gc-dangle-2", "across", cmRef(elsewhere, false))

	e.waitCMGone("gc-dangle", "missing", "wrong-uid")
	e.waitCMGone("gc-dangle-2", "across")
	if db, err := e.getDB(ctx, "gc-dangle", "real"); err != nil || db == nil || db.UID != real.UID {
		t.Fatalf("real: %v %+v", err, db)
	}
	if got := e.mustCM("gc-dangle", "elsewhere"); got.UID != elsewhere.UID {
		t.Fatalf("elsewhere replaced")
	}
}

// TestGCClusterScopedOwner: a cluster-scoped owner's namespaced dependents,
// in several namespaces, go with it.
func TestGCClusterScopedOwner(t *testing.T) {
	e := newGCEnv(t)
	ctx := t.Context()
	e.namespace("gc-cs-1")
	e.namespace("gc-cs-2")
	r := e.region("gc-eu")
	e.configMap("gc-cs-1", "dep", regionRef(r, false))
	e.database("gc-cs-2", "dep", regionRef(r, true))
	if err := e.cs.ExampleV1().Regions().Delete(ctx, "gc-eu", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitCMGone("gc-cs-1", "dep")
	e.waitDBGone("gc-cs-2", "dep")
}
