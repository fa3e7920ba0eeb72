package storagetest

import (
	"errors"
	"strings"
	"testing"

	"github.com/apiloom/apiloom/server/storage"
)

// errTryUpdate is returned by a tryUpdate in the tests to check that
// GuaranteedUpdate passes it through untouched.
var errTryUpdate = errors.New("storagetest: tryUpdate refused")

func testCreate(t *testing.T, e *env) {
	in := NewWidget("ns", "a", "red")
	out, err := e.store.Create(e.ctx, storage.Key("ns", "a"), in)
	if err != nil {
		t.Fatal(err)
	}
	e.log.record(out, false)
	if got := rv(t, out); got != e.rev() {
		t.Errorf("created resourceVersion %d, want the current revision %d", got, e.rev())
	}
	checkKind(t, out)
	if out.Name != "a" || out.Namespace != "ns" || out.Spec.Color != "red" {
		t.Errorf("created %+v", out)
	}

	got, err := e.store.Get(e.ctx, storage.Key("ns", "a"), storage.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.ResourceVersion != out.ResourceVersion || got.Spec != out.Spec {
		t.Errorf("get: %+v, want %+v", got, out)
	}
	checkKind(t, got)

	if _, err := e.store.Create(e.ctx, storage.Key("ns", "a"), NewWidget("ns", "a", "blue")); !errors.Is(err, storage.ErrExists) {
		t.Errorf("second create: %v, want ErrExists", err)
	}
	withRV := NewWidget("ns", "b", "red")
	withRV.ResourceVersion = "5"
	if _, err := e.store.Create(e.ctx, storage.Key("ns", "b"), withRV); !errors.Is(err, storage.ErrInvalidResourceVersion) {
		t.Errorf("create with resourceVersion: %v, want ErrInvalidResourceVersion", err)
	}
	if _, err := e.store.Get(e.ctx, storage.Key("ns", "b"), storage.GetOptions{}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("get after refused create: %v, want ErrNotFound", err)
	}
}

func testGet(t *testing.T, e *env) {
	a := e.create("ns", "a", "red")
	key := storage.Key("ns", "a")

	if _, err := e.store.Get(e.ctx, storage.Key("ns", "missing"), storage.GetOptions{}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("get missing: %v, want ErrNotFound", err)
	}
	// RV "0" accepts any state, so an implementation may lag: wait for it.
	eventually(t, e.ctx, func() error {
		_, err := e.store.Get(e.ctx, key, storage.GetOptions{ResourceVersion: "0"})
		return err
	})
	// RV N requires state at least N.
	got, err := e.store.Get(e.ctx, key, storage.GetOptions{ResourceVersion: a.ResourceVersion})
	if err != nil {
		t.Fatalf("get at its own resourceVersion: %v", err)
	}
	if got.ResourceVersion != a.ResourceVersion {
		t.Errorf("get at %s: resourceVersion %s", a.ResourceVersion, got.ResourceVersion)
	}
	tooLarge := storage.FormatResourceVersion(e.rev() + 1000)
	_, err = e.store.Get(e.ctx, key, storage.GetOptions{ResourceVersion: tooLarge})
	if !errors.Is(err, storage.ErrTooLargeResourceVersion) {
		t.Errorf("get at %s: %v, want ErrTooLargeResourceVersion", tooLarge, err)
	}
	if _, err := e.store.Get(e.ctx, key, storage.GetOptions{ResourceVersion: "x"}); !errors.Is(err, storage.ErrInvalidResourceVersion) {
		t.Errorf("get at RV x: %v, want ErrInvalidResourceVersion", err)
	}
}

func testInvalidKeys(t *testing.T, e *env) {
	for _, key := range []string{"", "a", "ns/", "/a", "ns/a/b", "ns/..", "../a", "ns/."} {
		if _, err := e.store.Get(e.ctx, key, storage.GetOptions{}); !errors.Is(err, storage.ErrInvalidKey) {
			t.Errorf("get %q: %v, want ErrInvalidKey", key, err)
		}
		if _, err := e.store.Create(e.ctx, key, NewWidget("ns", "a", "red")); !errors.Is(err, storage.ErrInvalidKey) {
			t.Errorf("create %q: %v, want ErrInvalidKey", key, err)
		}
	}
}

func testGuaranteedUpdate(t *testing.T, e *env) {
	a := e.create("ns", "a", "red")
	key := storage.Key("ns", "a")

	b := e.update("ns", "a", func(w *Widget) { w.Spec.Size = 2 })
	if rv(t, b) <= rv(t, a) || b.Spec.Size != 2 {
		t.Fatalf("update: rv %s → %s, size %d", a.ResourceVersion, b.ResourceVersion, b.Spec.Size)
	}
	checkKind(t, b)
	got, err := e.store.Get(e.ctx, key, storage.GetOptions{})
	if err != nil || got.ResourceVersion != b.ResourceVersion || got.Spec.Size != 2 {
		t.Fatalf("get after update: %+v, %v", got, err)
	}

	// Writing the same object again changes nothing and bumps nothing.
	revBefore := e.rev()
	c := e.update("ns", "a", func(w *Widget) {})
	if c.ResourceVersion != b.ResourceVersion || e.rev() != revBefore {
		t.Errorf("no-op update: rv %s → %s, etcd revision %d → %d", b.ResourceVersion, c.ResourceVersion, revBefore, e.rev())
	}

	// A resourceVersion other than the stored one is a conflict, not a retry.
	calls := 0
	_, err = e.store.GuaranteedUpdate(e.ctx, key, nil, func(w *Widget) (*Widget, error) {
		calls++
		w.ResourceVersion = a.ResourceVersion
		w.Spec.Size = 3
		return w, nil
	})
	if !errors.Is(err, storage.ErrConflict) || calls != 1 {
		t.Errorf("stale update: %v after %d calls, want ErrConflict after 1", err, calls)
	}

	_, err = e.store.GuaranteedUpdate(e.ctx, key, nil, func(w *Widget) (*Widget, error) { return nil, errTryUpdate })
	if !errors.Is(err, errTryUpdate) {
		t.Errorf("failing tryUpdate: %v, want its error", err)
	}
	_, err = e.store.GuaranteedUpdate(e.ctx, storage.Key("ns", "missing"), nil, func(w *Widget) (*Widget, error) { return w, nil })
	if !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("update missing: %v, want ErrNotFound", err)
	}
}

func testGuaranteedUpdateRetry(t *testing.T, e *env) {
	e.create("ns", "a", "red")
	key := storage.Key("ns", "a")
	var seen []string
	out, err := e.store.GuaranteedUpdate(e.ctx, key, nil, func(w *Widget) (*Widget, error) {
		seen = append(seen, w.ResourceVersion)
		if len(seen) == 1 {
			// Someone else writes between our read and our write.
			e.update("ns", "a", func(w *Widget) { w.Spec.Color = "blue" })
		}
		w.Spec.Size = 5
		return w, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[0] == seen[1] {
		t.Fatalf("tryUpdate saw resourceVersions %v, want two different ones", seen)
	}
	if out.Spec.Color != "blue" || out.Spec.Size != 5 {
		t.Errorf("result %+v keeps only one of two writes", out.Spec)
	}
	if rv(t, out) != e.rev() {
		t.Errorf("result resourceVersion %s, want current revision %d", out.ResourceVersion, e.rev())
	}
}

func testGuaranteedUpdatePreconditions(t *testing.T, e *env) {
	a := e.create("ns", "a", "red")
	key := storage.Key("ns", "a")
	bump := func(w *Widget) (*Widget, error) { w.Spec.Size++; return w, nil }

	wrongUID, wrongRV := "other", "1"
	_, err := e.store.GuaranteedUpdate(e.ctx, key, &storage.Preconditions{UID: &wrongUID}, bump)
	if !errors.Is(err, storage.ErrPrecondition) || !strings.Contains(err.Error(), "UID in precondition: other") {
		t.Errorf("wrong uid: %v, want ErrPrecondition naming the UIDs", err)
	}
	_, err = e.store.GuaranteedUpdate(e.ctx, key, &storage.Preconditions{ResourceVersion: &wrongRV}, bump)
	if !errors.Is(err, storage.ErrPrecondition) {
		t.Errorf("wrong resourceVersion: %v, want ErrPrecondition", err)
	}
	uid, version := string(a.UID), a.ResourceVersion
	out, err := e.store.GuaranteedUpdate(e.ctx, key, &storage.Preconditions{UID: &uid, ResourceVersion: &version}, bump)
	if err != nil || out.Spec.Size != 2 {
		t.Errorf("matching preconditions: %+v, %v", out, err)
	}
}

func testDelete(t *testing.T, e *env) {
	e.create("ns", "a", "red")
	b := e.update("ns", "a", func(w *Widget) { w.Spec.Size = 9 })

	out := e.delete("ns", "a")
	if rv(t, out) <= rv(t, b) || rv(t, out) != e.rev() {
		t.Errorf("deleted object resourceVersion %s, want the deletion revision %d", out.ResourceVersion, e.rev())
	}
	if out.Spec.Size != 9 || out.Name != "a" {
		t.Errorf("deleted object %+v, want its last state", out)
	}
	checkKind(t, out)
	if _, err := e.store.Get(e.ctx, storage.Key("ns", "a"), storage.GetOptions{}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("get after delete: %v, want ErrNotFound", err)
	}
	if _, err := e.store.Delete(e.ctx, storage.Key("ns", "a"), nil); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("second delete: %v, want ErrNotFound", err)
	}
}

func testDeletePreconditions(t *testing.T, e *env) {
	a := e.create("ns", "a", "red")
	key := storage.Key("ns", "a")
	wrongUID, wrongRV := "other", "1"
	for _, pre := range []*storage.Preconditions{{UID: &wrongUID}, {ResourceVersion: &wrongRV}} {
		if _, err := e.store.Delete(e.ctx, key, pre); !errors.Is(err, storage.ErrPrecondition) {
			t.Errorf("delete with %+v: %v, want ErrPrecondition", pre, err)
		}
	}
	if _, err := e.store.Get(e.ctx, key, storage.GetOptions{}); err != nil {
		t.Fatalf("object gone after refused deletes: %v", err)
	}
	uid, version := string(a.UID), a.ResourceVersion
	out, err := e.store.Delete(e.ctx, key, &storage.Preconditions{UID: &uid, ResourceVersion: &version})
	if err != nil {
		t.Fatalf("delete with matching preconditions: %v", err)
	}
	e.log.record(out, true)
}
