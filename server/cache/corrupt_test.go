package cache

import (
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// TestCorruptValueAtStart: a cache whose first list meets a value that
// does not decode still becomes ready (it kept the server's /readyz at
// 503 for good), leaves the value out, knows the key as corrupt and
// answers a Get of it from memory with the store's error, not a 404 that
// a create of the same name (409 AlreadyExists) would contradict.
func TestCorruptValueAtStart(t *testing.T) {
	client := etcdtest.Start(t)
	ctx := t.Context()
	put, err := client.Put(ctx, storagetest.Prefix+"ns/bad", "not json")
	if err != nil {
		t.Fatal(err)
	}
	def := storagetest.Definition()
	src := &faultySource{Store: storage.New(client, storagetest.Prefix, def)}
	if _, err := src.Create(ctx, "ns/good", storagetest.NewWidget("ns", "good", "red")); err != nil {
		t.Fatal(err)
	}
	c := newReadyCache[*widget](t, def, src, WithMetrics(prometheus.NewRegistry()))

	l, err := c.GetList(ctx, storage.ListOptions{ResourceVersion: "0"})
	if err != nil || len(l.Items) != 1 || l.Items[0].Name != "good" {
		t.Fatalf("list: %v, %v; want only good", l, err)
	}
	gets := src.gets.Load()
	_, err = c.Get(ctx, "ns/bad", storage.GetOptions{ResourceVersion: "0"})
	se, ok := storage.AsError(err)
	if !ok || !errors.Is(err, storage.ErrCorrupt) || se.Key != "ns/bad" || se.ResourceVersion != put.Header.Revision {
		t.Fatalf("get: %v, want ErrCorrupt for ns/bad at %d", err, put.Header.Revision)
	}
	if src.gets.Load() != gets {
		t.Error("get of a known corrupt key went to the source")
	}
	if n := metricValue(t, c.metrics.corrupt); n != 1 {
		t.Errorf("corrupt objects gauge %v, want 1", n)
	}
}

// TestCorruptGaugeFollowsTheSource: the corrupt objects the cache knows
// follow its source watch (a key turning unreadable, deleted, repaired)
// and survive a relist.
func TestCorruptGaugeFollowsTheSource(t *testing.T) {
	h := newHarness(t, WithMetrics(prometheus.NewRegistry()))
	gauge := func(want float64) {
		t.Helper()
		resp, err := h.client.Get(h.ctx, "revision-probe")
		if err != nil {
			t.Fatal(err)
		}
		waitRevision(t, h.cache, resp.Header.Revision)
		if n := metricValue(t, h.cache.metrics.corrupt); n != want {
			t.Errorf("corrupt objects gauge %v, want %v", n, want)
		}
	}
	put := func(name, value string) {
		t.Helper()
		if _, err := h.client.Put(h.ctx, storagetest.Prefix+"ns/"+name, value); err != nil {
			t.Fatal(err)
		}
	}
	h.create("ns", "a")
	put("a", "not json")
	put("b", "not json")
	gauge(2)
	if _, err := h.cache.Get(h.ctx, "ns/b", storage.GetOptions{ResourceVersion: "0"}); !errors.Is(err, storage.ErrCorrupt) {
		t.Errorf("get of a key turned corrupt: %v, want ErrCorrupt", err)
	}

	// A relist learns them again from the list.
	lists := h.src.lists.Load()
	h.src.fail(&storage.Error{Err: storage.ErrExpired})
	c := h.create("ns", "c")
	waitRevision(t, h.cache, mustRV(t, c))
	if h.src.lists.Load() == lists {
		t.Fatal("the cache did not relist")
	}
	gauge(2)

	if err := h.cache.DeleteCorrupt(h.ctx, "ns/a", false); err != nil {
		t.Fatal(err)
	}
	gauge(1)
	put("b", `{"kind":"Widget","apiVersion":"storagetest.apiloom.dev/v1","metadata":{"name":"b","namespace":"ns"}}`)
	gauge(0)
	if got, err := h.cache.Get(h.ctx, "ns/b", storage.GetOptions{ResourceVersion: "0"}); err != nil || got.Name != "b" {
		t.Errorf("get of a repaired key: %v, %v", got, err)
	}
}
