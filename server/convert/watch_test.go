package convert

import (
	"bytes"
	"context"
	"testing"
	"time"
	"unsafe"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// TestStoredConverted: what a version writes is stored converted, and
// reads convert it back, through the store and through the watch cache.
func TestStoredConverted(t *testing.T) {
	client := storagetest.NewClient(t, etcdtest.Start(t), "stored")
	stored, v2, conv := versions()
	inner := storage.New(client, storagetest.Prefix, stored)
	s := New(inner, v2, conv)
	ctx := t.Context()
	if _, err := s.Create(ctx, "ns/a", storagetest.NewWidget("ns", "a", "red")); err != nil {
		t.Fatal(err)
	}
	raw, err := inner.Get(ctx, "ns/a", storage.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if raw.Spec.Size != sizeFactor {
		t.Fatalf("stored size %d, want %d", raw.Spec.Size, sizeFactor)
	}
	got, err := s.GuaranteedUpdate(ctx, "ns/a", nil, func(cur *widget) (*widget, error) {
		if cur.Spec.Size != 1 {
			t.Errorf("tryUpdate sees size %d, want 1", cur.Spec.Size)
		}
		cur.Spec.Size = 3
		return cur, nil
	})
	if err != nil || got.Spec.Size != 3 {
		t.Fatalf("update: %v, size %d", err, got.Spec.Size)
	}
	c := newReadyCache(t, stored, client)
	viaCache := New(c, v2, conv)
	l, err := viaCache.GetList(ctx, storage.ListOptions{ResourceVersion: got.ResourceVersion, ResourceVersionMatch: "NotOlderThan"})
	if err != nil || len(l.Items) != 1 || l.Items[0].Spec.Size != 3 || l.Raw != nil {
		t.Fatalf("list through the cache: %v %+v", err, l)
	}
}

// TestWatchEncodedOncePerVersion: two watchers of one version over the
// watch cache get each event's frame encoded once, the same bytes, in
// the version's form; a conversion the memo left out would give each
// watcher its own encoding.
func TestWatchEncodedOncePerVersion(t *testing.T) {
	client := storagetest.NewClient(t, etcdtest.Start(t), "frames")
	stored, v2, conv := versions()
	c := newReadyCache(t, stored, client)
	s := New(c, v2, conv)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	w1, err := s.Watch(ctx, storage.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	defer w1.Stop()
	w2, err := s.Watch(ctx, storage.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Stop()
	w := storagetest.NewWidget("ns", "a", "red")
	w.Spec.Size = 7
	if _, err := s.Create(ctx, "ns/a", w); err != nil {
		t.Fatal(err)
	}
	e1, e2 := next(t, ctx, w1), next(t, ctx, w2)
	if e1.Frame == nil || unsafe.SliceData(e1.Frame) != unsafe.SliceData(e2.Frame) {
		t.Fatalf("frames not shared: %p %p", unsafe.SliceData(e1.Frame), unsafe.SliceData(e2.Frame))
	}
	if e1.Object.Spec.Size != 7 || !bytes.Contains(e1.Frame, []byte(`"size":7`)) || !bytes.HasPrefix(e1.Frame, []byte(`{"type":"ADDED"`)) {
		t.Fatalf("event %+v frame %s, want the version's size 7", e1.Object.Spec, e1.Frame)
	}
}

// next is w's next event.
func next(t *testing.T, ctx context.Context, w storage.Watcher[*widget]) storage.Event[*widget] {
	t.Helper()
	b := storage.NewBlocking(w)
	evs, err := b.Next(ctx, nil)
	if err != nil || len(evs) == 0 {
		t.Fatalf("next: %v %v", evs, err)
	}
	return evs[0]
}
