package cache

import (
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/storage"
)

// Backends differ in their progress notifications: etcd answers every
// request once the watch has caught up, kine answers only while all of its
// watches are synced, and a proxy may drop them. These tests check that
// reads stay correct, only slower, when notifications come late or never.

// idleBehind leaves the harness's cache behind etcd without an event to
// catch up with: a write to a key outside the resource moves etcd's
// revision. It returns that revision.
func idleBehind(t *testing.T, h *harness) int64 {
	t.Helper()
	h.create("ns", "a")
	put, err := h.client.Put(h.ctx, "/elsewhere", "x")
	if err != nil {
		t.Fatal(err)
	}
	if h.cache.Revision() >= put.Header.Revision {
		t.Fatalf("cache at %d, already at the write elsewhere (%d)", h.cache.Revision(), put.Header.Revision)
	}
	return put.Header.Revision
}

// TestConsistentReadsWithoutProgressNotifications: a backend that never
// answers a progress request costs a consistent read of an idle resource
// the wait timeout, after which the store answers it; nothing is stale.
func TestConsistentReadsWithoutProgressNotifications(t *testing.T) {
	h := newHarness(t, WithWaitTimeout(200*time.Millisecond))
	h.src.mu.Lock()
	h.src.dropProgress = true
	h.src.mu.Unlock()
	elsewhere := idleBehind(t, h)
	lists, watches := h.src.lists.Load(), h.src.watches.Load()

	l, err := h.cache.GetList(h.ctx, storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l.ResourceVersion < elsewhere || len(l.Items) != 1 {
		t.Errorf("consistent list: %d items at %d, want 1 at or after %d", len(l.Items), l.ResourceVersion, elsewhere)
	}
	if n := h.src.lists.Load() - lists; n != 1 {
		t.Errorf("%d consistent lists reached the store, want 1 (the fallback)", n)
	}
	if h.src.progressRequests.Load() == 0 {
		t.Error("the cache never asked for progress")
	}

	w, err := h.cache.Watch(h.ctx, storage.ListOptions{ResourceVersion: ""})
	if err != nil {
		t.Fatal(err)
	}
	w.Stop()
	if n := h.src.watches.Load() - watches; n != 1 {
		t.Errorf("%d consistent watches reached the store, want 1 (the fallback)", n)
	}

	// A revision the cache cannot show to be reached is refused as too
	// large, as kube-apiserver's cache refuses it, never served stale.
	_, err = h.cache.GetList(h.ctx, storage.ListOptions{ResourceVersion: storage.FormatResourceVersion(elsewhere),
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
	if !errors.Is(err, storage.ErrTooLargeResourceVersion) {
		t.Errorf("list not older than %d: %v, want ErrTooLargeResourceVersion", elsewhere, err)
	}

	// The next event brings the cache up to date by itself.
	b := h.create("ns", "b")
	waitRevision(t, h.cache, mustRV(t, b))
	lists = h.src.lists.Load()
	if l, err := h.cache.GetList(h.ctx, storage.ListOptions{}); err != nil || len(l.Items) != 2 {
		t.Fatalf("consistent list after a write: %v, %v", l, err)
	}
	if n := h.src.lists.Load() - lists; n != 0 {
		t.Errorf("%d lists reached the store once the cache was current, want 0", n)
	}
}

// TestConsistentReadsWithLateProgressNotifications: a notification that
// arrives while the reader still waits is enough; the read is answered
// from memory at or after the revision it needed.
func TestConsistentReadsWithLateProgressNotifications(t *testing.T) {
	h := newHarness(t)
	held, asked := make(chan struct{}), make(chan struct{}, 1)
	h.src.mu.Lock()
	h.src.progress, h.src.progressAsked = held, asked
	h.src.mu.Unlock()
	elsewhere := idleBehind(t, h)
	lists := h.src.lists.Load()

	type result struct {
		l   *storage.List[*widget]
		err error
	}
	done := make(chan result, 1)
	go func() {
		l, err := h.cache.GetList(h.ctx, storage.ListOptions{})
		done <- result{l, err}
	}()
	select {
	case <-asked:
	case <-time.After(waitTimeout):
		t.Fatal("the waiting list never asked for progress")
	}
	close(held) // the late notification
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.l.ResourceVersion < elsewhere || len(r.l.Items) != 1 {
		t.Errorf("consistent list: %d items at %d, want 1 at or after %d", len(r.l.Items), r.l.ResourceVersion, elsewhere)
	}
	if n := h.src.lists.Load() - lists; n != 0 {
		t.Errorf("%d lists reached the store, want 0 (served from memory)", n)
	}
}
