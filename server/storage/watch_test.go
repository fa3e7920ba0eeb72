package storage_test

import (
	"context"
	"errors"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// next reads n events or fails the test.
func next(t *testing.T, w storage.Watcher[*storagetest.Widget], n int) []storage.Event[*storagetest.Widget] {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	events := storage.NewBlocking(w)
	var got []storage.Event[*storagetest.Widget]
	for len(got) < n {
		var err error
		if got, err = events.Next(ctx, got); err != nil {
			t.Fatalf("waiting for %d events, have %d: %v", n, len(got), err)
		}
	}
	if len(got) != n {
		t.Fatalf("got %d events, want %d", len(got), n)
	}
	return got
}

func testWatchBookmarksFromProgress(t *testing.T, c *clientv3.Client) {
	s := newWidgetStore(t, c)
	ctx := t.Context()
	cur, err := s.CurrentRevision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start := storage.ListOptions{ResourceVersion: storage.FormatResourceVersion(cur)}
	withBookmarks := start
	withBookmarks.AllowBookmarks = true

	wb, err := s.Watch(ctx, withBookmarks)
	if err != nil {
		t.Fatal(err)
	}
	defer wb.Stop()
	plain, err := s.Watch(ctx, start)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Stop()

	x, err := s.Create(ctx, "ns/x", storagetest.NewWidget("ns", "x", "red"))
	if err != nil {
		t.Fatal(err)
	}
	next(t, wb, 1)
	next(t, plain, 1)
	if err := s.RequestProgress(ctx); err != nil {
		t.Fatal(err)
	}
	bm := next(t, wb, 1)[0]
	if bm.Type != watch.Bookmark || bm.Object.ResourceVersion != x.ResourceVersion || bm.Object.Kind != "Widget" {
		t.Errorf("got %s %+v, want a BOOKMARK at %s", bm.Type, bm.Object.ObjectMeta, x.ResourceVersion)
	}
	// The plain watch got no bookmark: its next event is the next write.
	y, err := s.Create(ctx, "ns/y", storagetest.NewWidget("ns", "y", "red"))
	if err != nil {
		t.Fatal(err)
	}
	if ev := next(t, plain, 1)[0]; ev.Type != watch.Added || ev.Object.ResourceVersion != y.ResourceVersion {
		t.Errorf("plain watch: got %s %s", ev.Type, ev.Object.Name)
	}
}

func testWatchSlowConsumerExpires(t *testing.T, c *clientv3.Client) {
	s := newWidgetStore(t, c, storage.WithWatchQueueLimit(3))
	ctx := t.Context()
	w, err := s.Watch(ctx, storage.ListOptions{ResourceVersion: "1"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		if _, err := s.Create(ctx, "ns/"+name, storagetest.NewWidget("ns", name, "red")); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-storage.WatcherDone(w):
	case <-time.After(10 * time.Second):
		t.Fatal("watch with a full queue did not end")
	}
	// What was queued is delivered, in order, then the error.
	events := storage.NewBlocking(w)
	got, err := events.Next(ctx, nil)
	if err != nil || len(got) != 3 || got[0].Object.Name != "a" || got[2].Object.Name != "c" {
		t.Fatalf("queued events: %d, %v", len(got), err)
	}
	if _, err := events.Next(ctx, nil); !errors.Is(err, storage.ErrExpired) {
		t.Errorf("after the queued events: %v, want ErrExpired", err)
	}
}

func testWatchEndsWithItsContext(t *testing.T, c *clientv3.Client) {
	s := newWidgetStore(t, c)
	ctx, cancel := context.WithCancel(t.Context())
	w, err := s.Watch(ctx, storage.ListOptions{ResourceVersion: "1"})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-storage.WatcherDone(w):
	case <-time.After(10 * time.Second):
		t.Fatal("watch goroutine outlived its context")
	}
	if _, err := storage.NewBlocking(w).Next(t.Context(), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Next after the watch context ended: %v, want context.Canceled", err)
	}
	w.Stop()
}
