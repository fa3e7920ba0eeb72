package kine

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/cache"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// countingStore counts the lists that reach the backend.
type countingStore struct {
	*storage.Store[*storagetest.Widget]
	lists atomic.Int32
}

func (s *countingStore) GetList(ctx context.Context, opts storage.ListOptions) (*storage.List[*storagetest.Widget], error) {
	s.lists.Add(1)
	return s.Store.GetList(ctx, opts)
}

// TestProgressOnIdleResource checks that kine answers the watch cache's
// progress requests: a consistent read of a resource nobody writes, while
// the backend's revision moves elsewhere, is served from memory at or
// after that revision, rather than after the wait timeout by the store
// (server/cache's tests cover a backend that never answers).
func TestProgressOnIdleResource(t *testing.T) {
	c := startKine(t)
	def := storagetest.Definition()
	src := &countingStore{Store: storage.New(c, keyspace(t), def)}
	// A wait timeout far beyond any answer's latency, so that a fallback
	// to the store can only mean no answer.
	wc, err := cache.New(def, src, cache.WithWaitTimeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(wc.Close)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	if err := wc.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := wc.Create(ctx, storage.Key("ns", "a"), storagetest.NewWidget("ns", "a", "red")); err != nil {
		t.Fatal(err)
	}

	for i := range 3 {
		put, err := c.Put(ctx, "/elsewhere", "x")
		if err != nil {
			t.Fatal(err)
		}
		lists := src.lists.Load()
		start := time.Now()
		l, err := wc.GetList(ctx, storage.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("consistent list %d of an idle resource on kine: %v", i, time.Since(start).Round(time.Millisecond))
		if l.ResourceVersion < put.Header.Revision || len(l.Items) != 1 {
			t.Errorf("consistent list: %d items at %d, want 1 at or after %d", len(l.Items), l.ResourceVersion, put.Header.Revision)
		}
		if n := src.lists.Load() - lists; n != 0 {
			t.Errorf("%d lists reached kine: the cache got no progress notification", n)
		}

		put, err = c.Put(ctx, "/elsewhere", "y")
		if err != nil {
			t.Fatal(err)
		}
		rv := storage.FormatResourceVersion(put.Header.Revision)
		if _, err := wc.GetList(ctx, storage.ListOptions{ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}); err != nil {
			t.Errorf("list not older than %s: %v", rv, err)
		}
	}
}
