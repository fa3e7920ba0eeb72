package storage_test

import (
	"errors"
	"testing"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// TestDryRun: a dry run's writes answer as the store's would, from what
// is stored, and store nothing.
func TestDryRun(t *testing.T) {
	c := storagetest.NewClient(t, etcdtest.Start(t), "/dryrun")
	s := newWidgetStore(t, c)
	d := storage.DryRun[*storagetest.Widget](s)
	ctx := t.Context()
	w := &storagetest.Widget{}
	w.Name, w.Namespace = "a", "ns"
	key := storage.Key("ns", "a")

	got, err := d.Create(ctx, key, w)
	if err != nil || got != w {
		t.Fatalf("dry-run create: %v, %v", got, err)
	}
	if _, err := s.Get(ctx, key, storage.GetOptions{}); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("a dry-run create stored: %v", err)
	}
	if _, err := d.GuaranteedUpdate(ctx, key, nil, func(cur *storagetest.Widget) (*storagetest.Widget, error) { return cur, nil }); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("dry-run update of nothing: %v", err)
	}
	if _, err := d.Delete(ctx, key, nil); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("dry-run delete of nothing: %v", err)
	}

	stored, err := s.Create(ctx, key, w.DeepCopyObject().(*storagetest.Widget))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Create(ctx, key, w); !errors.Is(err, storage.ErrExists) {
		t.Fatalf("dry-run create over an object: %v", err)
	}
	updated, err := d.GuaranteedUpdate(ctx, key, nil, func(cur *storagetest.Widget) (*storagetest.Widget, error) {
		cur.Spec.Size = 3
		return cur, nil
	})
	if err != nil || updated.Spec.Size != 3 {
		t.Fatalf("dry-run update: %v, %v", updated, err)
	}
	wrongUID := "other"
	if _, err := d.GuaranteedUpdate(ctx, key, &storage.Preconditions{UID: &wrongUID}, func(cur *storagetest.Widget) (*storagetest.Widget, error) { return cur, nil }); !errors.Is(err, storage.ErrPrecondition) {
		t.Fatalf("dry-run update with a failing precondition: %v", err)
	}
	if _, err := d.Delete(ctx, key, &storage.Preconditions{UID: &wrongUID}); !errors.Is(err, storage.ErrPrecondition) {
		t.Fatalf("dry-run delete with a failing precondition: %v", err)
	}
	if gone, err := d.Delete(ctx, key, nil); err != nil || gone.ResourceVersion != stored.ResourceVersion {
		t.Fatalf("dry-run delete: %v, %v", gone, err)
	}
	after, err := s.Get(ctx, key, storage.GetOptions{})
	if err != nil || after.ResourceVersion != stored.ResourceVersion || after.Spec.Size != 0 {
		t.Fatalf("dry runs changed what is stored: %+v, %v", after, err)
	}
}
