package cache

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// viewOf is a view at revision 1 of n objects in namespace "ns" and as
// many in "other", knowing the size of namespace in ("": of the whole).
func viewOf(n int, in string) view[*widget] {
	t := newTree[*widget]()
	for _, ns := range []string{"ns", "other"} {
		for i := range n {
			name := fmt.Sprintf("w%07d", i)
			t.ReplaceOrInsert(keptItem(ns+"/"+name, ns, storagetest.NewWidget(ns, name, "red")))
		}
	}
	size := int64(n)
	if in == "" {
		size = int64(t.Len())
	}
	return view[*widget]{tree: t, rev: 1, ns: in, inNS: size}
}

// TestPageCountsWithoutWalking: pages of a list of the whole resource or
// of one namespace carry how many keys of it precede them, so each page's
// remainingItemCount is arithmetic; a token whose count does not fit the
// snapshot (tampered, or issued by the store) or counted another range
// falls back to counting, with the same result, and the next token counts
// again.
func TestPageCountsWithoutWalking(t *testing.T) {
	for _, ns := range []string{"", "ns", "other"} {
		v := viewOf(617, ns)
		m := newMatcher(ns, nil, nil)
		from, total := "ns/", int64(v.tree.Len()) // "ns" goes first
		if ns != "" {
			from, total = ns+"/", 617
		}
		l := page(v, &m, 500, "", 0, false)
		for want := total - 500; want > 0; want -= 500 {
			if l.RemainingItemCount == nil || *l.RemainingItemCount != want {
				t.Fatalf("%q: remaining %v, want %d", ns, l.RemainingItemCount, want)
			}
			start, _, before, err := storage.DecodeCountedContinue(l.Continue, ns)
			if err != nil || before != total-want {
				t.Fatalf("%q: token counts %d before %q (%v), want %d", ns, before, start, err, total-want)
			}
			if _, _, other, _ := storage.DecodeCountedContinue(l.Continue, ns+"x"); other != -1 {
				t.Fatalf("%q: the token's count is taken for another namespace: %d", ns, other)
			}
			l = page(v, &m, 500, start, before, false)
		}
		if l.Continue != "" || int64(len(l.Items)) != total%500 {
			t.Fatalf("%q: last page: %d items, continue %q", ns, len(l.Items), l.Continue)
		}
		for _, before := range []int64{-1, 5000} {
			l := page(v, &m, 10, from+"w0000499\x00", before, false)
			want := total - 500 - 10
			if l.RemainingItemCount == nil || *l.RemainingItemCount != want {
				t.Fatalf("%q, before=%d: remaining %v, want %d", ns, before, l.RemainingItemCount, want)
			}
			if _, _, counted, _ := storage.DecodeCountedContinue(l.Continue, ns); counted != total-want {
				t.Fatalf("%q, before=%d: the next token counts %d, want %d", ns, before, counted, total-want)
			}
		}
	}
}

// BenchmarkPage is one page of 500 of a list of the whole resource and of
// one namespace, from the middle of it, at 10,000, 100,000 and 1,000,000
// objects: its cost must not grow with the objects stored.
func BenchmarkPage(b *testing.B) {
	for _, n := range []int{10000, 100000, 1000000} {
		for _, ns := range []string{"", "ns"} {
			benchmarkPage(b, n, ns)
		}
	}
}

func benchmarkPage(b *testing.B, n int, ns string) {
	v := viewOf(n/2, ns)
	m := newMatcher(ns, nil, nil)
	first := page(v, &m, int64(n/4), "", 0, false)
	start, _, before, err := storage.DecodeCountedContinue(first.Continue, ns)
	if err != nil || before < 0 {
		b.Fatal(before, err)
	}
	for _, counted := range []bool{true, false} {
		bb := before
		if !counted {
			bb = -1
		}
		b.Run(fmt.Sprintf("objects=%d/namespace=%q/counted=%v", n, ns, counted), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if l := page(v, &m, 500, start, bb, false); len(l.Items) != 500 {
					b.Fatal(len(l.Items))
				}
			}
		})
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

// TestPagedListsCountLikeTheStore pages through a namespace and the whole
// resource while other writes land between the pages, and checks every
// page, its remainingItemCount included, against the store's answer to the
// same request; the cache answers each from memory, and counts instead of
// walking.
func TestPagedListsCountLikeTheStore(t *testing.T) {
	h := newHarness(t)
	rnd := rand.New(rand.NewPCG(1, 2))
	namespaces := []string{"a", "b", "c"}
	var live []string // "ns/name"
	write := func() {
		if len(live) > 0 && rnd.IntN(3) == 0 {
			i := rnd.IntN(len(live))
			ns, name, _ := strings.Cut(live[i], "/")
			h.delete(ns, name)
			live = slices.Delete(live, i, i+1)
			return
		}
		ns := namespaces[rnd.IntN(len(namespaces))]
		name := fmt.Sprintf("w%04d", rnd.IntN(10000))
		if slices.Contains(live, ns+"/"+name) {
			return
		}
		h.create(ns, name)
		live = append(live, ns+"/"+name)
	}
	for range 40 {
		write()
	}
	lists := h.src.lists.Load()
	for _, ns := range []string{"", "a", "b"} {
		opts := storage.ListOptions{Namespace: ns, Limit: 3}
		for pages := 0; ; pages++ {
			got, err := h.cache.GetList(h.ctx, opts)
			if err != nil {
				t.Fatalf("%q page %d: %v", ns, pages, err)
			}
			want, err := h.src.Store.GetList(h.ctx, opts)
			if err != nil {
				t.Fatalf("%q page %d from the store: %v", ns, pages, err)
			}
			if got.ResourceVersion != want.ResourceVersion {
				t.Fatalf("%q page %d at %d, the store's at %d", ns, pages, got.ResourceVersion, want.ResourceVersion)
			}
			if !slices.Equal(names(got.Items), names(want.Items)) {
				t.Errorf("%q page %d: %v, the store %v", ns, pages, names(got.Items), names(want.Items))
			}
			if g, w := fmt.Sprint(deref(got.RemainingItemCount)), fmt.Sprint(deref(want.RemainingItemCount)); g != w {
				t.Errorf("%q page %d: remainingItemCount %s, the store %s", ns, pages, g, w)
			}
			if got.Continue == "" {
				if want.Continue != "" {
					t.Errorf("%q page %d: last page, the store's is not", ns, pages)
				}
				break
			}
			if _, _, before, _ := storage.DecodeCountedContinue(got.Continue, ns); before < 0 {
				t.Errorf("%q page %d: the token does not count", ns, pages)
			}
			opts.Continue = got.Continue
			write()
			write()
		}
	}
	if n := h.src.lists.Load() - lists; n != 0 {
		t.Errorf("the cache sent %d lists to the store", n)
	}
}

func deref(n *int64) any {
	if n == nil {
		return nil
	}
	return *n
}

// keptItem is an item for key that holds obj for its life, as one whose
// JSON does not alias does.
func keptItem(key, ns string, obj *widget) *item[*widget] {
	it := &item[*widget]{key: key, ns: ns, kept: true}
	it.hold(obj)
	return it
}
