package storage_test

import (
	"context"
	"errors"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

func testCompactorOneReplicaPerInterval(t *testing.T, c *clientv3.Client) {
	s := newWidgetStore(t, c)
	ctx := t.Context()
	x, err := s.Create(ctx, "ns/x", storagetest.NewWidget("ns", "x", "red"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.GuaranteedUpdate(ctx, "ns/x", nil, func(w *storagetest.Widget) (*storagetest.Widget, error) {
		w.Spec.Size = 2
		return w, nil
	}); err != nil {
		t.Fatal(err)
	}
	a, b := storage.NewCompactor(c, 0, nil), storage.NewCompactor(c, 0, nil)

	// First interval: a takes the clock and only records the revision; b
	// finds the clock moved.
	step := func(cp *storage.Compactor) int64 {
		t.Helper()
		rev, err := cp.Step(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return rev
	}
	if rev := step(a); rev != 0 {
		t.Fatalf("first step compacted %d", rev)
	}
	if rev := step(b); rev != 0 {
		t.Fatalf("second replica compacted %d in the same interval", rev)
	}
	// Second interval: a compacts what it saw at the first; b does not.
	compacted := step(a)
	if xRev, _ := storage.ParseResourceVersion(x.ResourceVersion); compacted <= xRev {
		t.Fatalf("compacted at %d, want after %s", compacted, x.ResourceVersion)
	}
	if rev := step(b); rev != 0 {
		t.Fatalf("second replica compacted %d in the same interval", rev)
	}
	if a.CompactedRevision() != compacted || b.CompactedRevision() != compacted {
		t.Errorf("compacted revision known as %d and %d, want %d", a.CompactedRevision(), b.CompactedRevision(), compacted)
	}

	_, err = s.GetList(ctx, storage.ListOptions{ResourceVersion: x.ResourceVersion, ResourceVersionMatch: "Exact"})
	if !errors.Is(err, storage.ErrExpired) {
		t.Errorf("exact list at %s after compaction: %v, want ErrExpired", x.ResourceVersion, err)
	}
	w, err := s.Watch(ctx, storage.ListOptions{ResourceVersion: x.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	_, err = storage.NewBlocking(w).Next(ctx, nil)
	if se, ok := storage.AsError(err); !errors.Is(err, storage.ErrExpired) || !ok || se.CurrentRevision != compacted {
		t.Errorf("watch from %s after compaction: %v, want ErrExpired naming compaction at %d", x.ResourceVersion, err, compacted)
	}
}

func testCompactorRun(t *testing.T, c *clientv3.Client) {
	ticks := make(chan time.Time)
	cp := storage.NewCompactor(c, time.Hour, nil, storage.WithCompactTicks(ticks))
	runCtx, stop := context.WithCancel(t.Context())
	defer stop()
	done := make(chan struct{})
	go func() { cp.Run(runCtx); close(done) }()

	if _, err := c.Put(t.Context(), "/k", "v"); err != nil {
		t.Fatal(err)
	}
	// Each send waits for Run to finish the previous step.
	for range 3 {
		ticks <- time.Time{}
	}
	if cp.CompactedRevision() == 0 {
		t.Error("no compaction after two intervals")
	}
	stop()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
}
