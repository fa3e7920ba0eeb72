package cache

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

type widget = storagetest.Widget

var _ storage.Interface[*widget] = (*Cache[*widget])(nil)
var _ Source[*widget] = (*storage.Store[*widget])(nil)

// TestConformance runs the storage conformance suite against the cache,
// started and ready before each test so that reads really come from memory.
func TestConformance(t *testing.T) {
	storagetest.Run(t, storagetest.Config{
		NewStore: func(t *testing.T, client *clientv3.Client) storage.Interface[*widget] {
			return newWidgetCache(t, client, WithWaitTimeout(time.Second))
		},
		Compact: func(t *testing.T, client *clientv3.Client, s storage.Interface[*widget], rev int64) {
			if _, err := client.Compact(t.Context(), rev); err != nil {
				t.Fatalf("compact at %d: %v", rev, err)
			}
			c := s.(*Cache[*widget])
			waitRevision(t, c, rev)
			c.dropHistoryBefore(rev)
		},
	})
}

// newWidgetCache starts a cache of storagetest Widgets on client, waits for
// it to be ready and closes it when t ends.
func newWidgetCache(t testing.TB, client *clientv3.Client, opts ...Option) *Cache[*widget] {
	t.Helper()
	def := storagetest.Definition()
	return newReadyCache(t, def, storage.New(client, storagetest.Prefix, def), opts...)
}

func newReadyCache[O resource.Object](t testing.TB, def *resource.Definition[O], src Source[O], opts ...Option) *Cache[O] {
	t.Helper()
	c, err := New(def, src, opts...)
	if err != nil {
		t.Fatalf("new cache: %v", err)
	}
	t.Cleanup(c.Close)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), 30*time.Second)
	defer cancel()
	if err := c.WaitReady(ctx); err != nil {
		t.Fatalf("cache not ready: %v", err)
	}
	return c
}

// waitRevision waits until c has caught up with rev.
func waitRevision[O resource.Object](t testing.TB, c *Cache[O], rev int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), 30*time.Second)
	defer cancel()
	for {
		err := c.waitFor(ctx, rev)
		if err == nil {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("cache did not reach revision %d (at %d): %v", rev, c.Revision(), err)
		}
	}
}

// dropHistoryBefore makes the history forget events up to rev, as if they
// had scrolled out of the window, so that tests can compact the cache the
// way they compact etcd.
func (c *Cache[O]) dropHistoryBefore(rev int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.hist
	for h.first < h.next && h.at(h.first).rev <= rev {
		h.ring[h.first%uint64(len(h.ring))] = nil
		h.first++
	}
	h.start = max(h.start, rev)
}
