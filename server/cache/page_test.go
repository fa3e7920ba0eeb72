package cache

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// viewOf is a view at revision 1 of n objects in ns.
func viewOf(n int) view[*widget] {
	t := newTree[*widget]()
	for i := range n {
		name := fmt.Sprintf("w%07d", i)
		t.ReplaceOrInsert(&item[*widget]{key: "ns/" + name, ns: "ns", obj: storagetest.NewWidget("ns", name, "red")})
	}
	return view[*widget]{tree: t, rev: 1}
}

// TestPageCountsWithoutWalking: pages of a list of the whole resource
// carry how many keys precede them, so each page's remainingItemCount is
// arithmetic; a token whose count does not fit the snapshot (tampered,
// or issued by the store) falls back to counting, with the same result.
func TestPageCountsWithoutWalking(t *testing.T) {
	v := viewOf(1234)
	var m matcher
	l := page(v, &m, 500, "", 0)
	for _, want := range []int64{734, 234} {
		if l.RemainingItemCount == nil || *l.RemainingItemCount != want {
			t.Fatalf("remaining %v, want %d", l.RemainingItemCount, want)
		}
		start, _, before, err := storage.DecodeCountedContinue(l.Continue)
		if err != nil || before != 1234-want {
			t.Fatalf("token counts %d before %q (%v), want %d", before, start, err, 1234-want)
		}
		l = page(v, &m, 500, start, before)
	}
	if l.Continue != "" || len(l.Items) != 234 {
		t.Fatalf("last page: %d items, continue %q", len(l.Items), l.Continue)
	}
	for _, before := range []int64{-1, 5000} {
		l := page(v, &m, 500, "ns/w0000499\x00", before)
		if l.RemainingItemCount == nil || *l.RemainingItemCount != 234 {
			t.Fatalf("before=%d: remaining %v, want 234", before, l.RemainingItemCount)
		}
	}
}

// BenchmarkPage is one page of 500 of a list of the whole resource, from
// the middle of it, at 10,000, 100,000 and 1,000,000 objects: its cost must not grow
// with the objects stored.
func BenchmarkPage(b *testing.B) {
	for _, n := range []int{10000, 100000, 1000000} {
		v := viewOf(n)
		var m matcher
		first := page(v, &m, int64(n/2), "", 0)
		start, _, before, err := storage.DecodeCountedContinue(first.Continue)
		if err != nil {
			b.Fatal(err)
		}
		for _, counted := range []bool{true, false} {
			bb := before
			if !counted {
				bb = -1
			}
			b.Run(fmt.Sprintf("objects=%d/counted=%v", n, counted), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if l := page(v, &m, 500, start, bb); len(l.Items) != 500 {
						b.Fatal(len(l.Items))
					}
				}
			})
		}
	}
}

// TestListRV0IgnoresLimit: as kube-apiserver's watch cache, an RV "0" list
// is answered whole whatever its limit; RV "" lists are paged.
func TestListRV0IgnoresLimit(t *testing.T) {
	h := newHarness(t)
	var last *widget
	for _, name := range []string{"a", "b", "c"} {
		last = h.create("ns", name)
	}
	// RV "0" is whatever the cache holds: let it hold the three first.
	rev, err := strconv.ParseInt(last.ResourceVersion, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	waitRevision(t, h.cache, rev)
	l, err := h.cache.GetList(h.ctx, storage.ListOptions{ResourceVersion: "0", Limit: 2})
	if err != nil || len(l.Items) != 3 || l.Continue != "" || l.RemainingItemCount != nil {
		t.Fatalf("RV 0, limit 2: %d items, continue %q, %v", len(l.Items), l.Continue, err)
	}
	if l, err = h.cache.GetList(h.ctx, storage.ListOptions{Limit: 2}); err != nil || len(l.Items) != 2 || l.Continue == "" {
		t.Fatalf("RV \"\", limit 2: %d items, continue %q, %v", len(l.Items), l.Continue, err)
	}
}
