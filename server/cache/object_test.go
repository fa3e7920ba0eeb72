package cache

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// TestItemHoldsItsObjectOnlyWhilePinned: an item an event in the window
// carries holds its decoded object; a listed item, or one whose event has
// left the window, holds none and decodes it from its JSON when asked.
func TestItemHoldsItsObjectOnlyWhilePinned(t *testing.T) {
	h := newHarness(t)
	created := h.create("ns", "a", "app", "web")
	rev, err := strconv.ParseInt(created.ResourceVersion, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	itemOf := func(c *Cache[*widget]) *item[*widget] {
		waitRevision(t, c, rev)
		c.mu.RLock()
		defer c.mu.RUnlock()
		it, ok := c.tree.Get(&item[*widget]{key: "ns/a"})
		if !ok {
			t.Fatal("ns/a is not in the cache")
		}
		return it
	}
	check := func(how string, obj *widget) {
		t.Helper()
		if obj.Name != "a" || obj.Labels["app"] != "web" || obj.ResourceVersion != created.ResourceVersion || obj.Kind != "Widget" {
			t.Errorf("%s: object %+v", how, obj)
		}
	}

	pinned := itemOf(h.cache)
	if r := pinned.ref.Load(); !pinned.pinned.Load() || r == nil || !r.held {
		t.Fatalf("the item of an event in the window holds no object")
	}
	if a, b := pinned.object(), pinned.object(); a != b {
		t.Error("a pinned item decoded its object twice")
	}
	check("pinned", pinned.object())
	pinned.unpin()
	if r := pinned.ref.Load(); r == nil || r.held {
		t.Error("an unpinned item still holds its object")
	}
	check("unpinned", pinned.object())

	listed := itemOf(newReadyCache(t, storagetest.Definition(), h.src))
	if listed.pinned.Load() || listed.ref.Load() != nil {
		t.Fatal("a listed item holds an object")
	}
	check("listed", listed.object())
	if r := listed.ref.Load(); r == nil || r.held {
		t.Error("a listed item holds the object it decoded")
	}
}

// TestEncodedReadsDecodeNothing: a list, watch or GET asked for Encoded
// carries the same JSON as one without, and no decoded object.
func TestEncodedReadsDecodeNothing(t *testing.T) {
	h := newHarness(t)
	h.create("ns", "a", "app", "web")
	last := h.create("ns", "b", "app", "db")
	opts := storage.ListOptions{ResourceVersion: last.ResourceVersion, ResourceVersionMatch: "NotOlderThan"}
	full, err := h.cache.GetList(h.ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.Encoded = true
	encoded, err := h.cache.GetList(h.ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(full.Items) != 2 || full.Items[0].Name != "a" || full.Items[1].Name != "b" {
		t.Fatalf("list: %+v", full.Items)
	}
	if encoded.Items != nil || encoded.Len() != 2 || encoded.Encodings == nil {
		t.Fatalf("encoded list: %d items, %d raw", len(encoded.Items), len(encoded.Raw))
	}
	for i := range full.Raw {
		if !bytes.Equal(full.Raw[i], encoded.Raw[i]) {
			t.Errorf("item %d: encoded list has %s, want %s", i, encoded.Raw[i], full.Raw[i])
		}
	}

	obj, raw, err := h.cache.GetEncoded(h.ctx, "ns/b", storage.GetOptions{ResourceVersion: "0", Encoded: true})
	if err != nil || obj != nil || !bytes.Equal(raw, full.Raw[1]) {
		t.Errorf("encoded GET: %v, %v, %s; want no object and %s", err, obj, raw, full.Raw[1])
	}

	w := h.watch(storage.ListOptions{ResourceVersion: "0", Encoded: true})
	initial := next(t, w, 2, false)
	h.update("ns", "a", func(w *widget) { w.Spec.Color = "blue" })
	events := append(initial, next(t, w, 1, false)...)
	for i, e := range events {
		if e.Object != nil || len(e.Frame) == 0 {
			t.Errorf("event %d (%s): object %v, frame %q; want a frame only", i, e.Type, e.Object, e.Frame)
		}
	}
	if want := full.Raw[0]; !bytes.Contains(events[0].Frame, want) {
		t.Errorf("initial event %s, want the object %s", events[0].Frame, want)
	}
}
