package cache

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
	"github.com/apiloom/apiloom/server/wire"
)

func names(ws []*widget) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Namespace + "/" + w.Name + "@" + w.ResourceVersion
	}
	return out
}

// TestReadsFromMemory checks that the reads the cache can answer never
// reach the store, and that they agree with the store.
func TestReadsFromMemory(t *testing.T) {
	h := newHarness(t)
	a := h.create("ns", "a")
	b := h.create("ns", "b")
	c := h.create("other", "c")
	mid := h.update("ns", "a", func(w *widget) { w.Spec.Size = 2 })
	h.delete("ns", "b")
	h.create("ns", "d")
	lists, gets := h.src.lists.Load(), h.src.gets.Load()

	list := func(opts storage.ListOptions) *storage.List[*widget] {
		t.Helper()
		l, err := h.cache.GetList(h.ctx, opts)
		if err != nil {
			t.Fatalf("list %+v: %v", opts, err)
		}
		want, err := h.src.Store.GetList(h.ctx, opts)
		if err != nil {
			t.Fatalf("store list %+v: %v", opts, err)
		}
		if l.ResourceVersion == want.ResourceVersion && !slices.Equal(names(l.Items), names(want.Items)) {
			t.Errorf("list %+v at %d: cache %v, store %v", opts, l.ResourceVersion, names(l.Items), names(want.Items))
		}
		return l
	}

	cur := list(storage.ListOptions{})
	if want := []string{"ns/a@" + mid.ResourceVersion, "ns/d", "other/c"}; len(cur.Items) != 3 || names(cur.Items)[0] != want[0] {
		t.Errorf("consistent list: %v", names(cur.Items))
	}
	list(storage.ListOptions{ResourceVersion: "0"})
	list(storage.ListOptions{ResourceVersion: a.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
	list(storage.ListOptions{Namespace: "ns", ResourceVersion: "0"})
	// Exact, inside the window: reconstructed from the history.
	for _, rv := range []string{a.ResourceVersion, mid.ResourceVersion} {
		l := list(storage.ListOptions{ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		if storage.FormatResourceVersion(l.ResourceVersion) != rv {
			t.Errorf("exact list at %s answered at %d", rv, l.ResourceVersion)
		}
	}
	// Pages, continued by the cache, at the first page's revision, which
	// is an older one (a limit with an RV is an exact read).
	var paged []*widget
	opts := storage.ListOptions{Limit: 1, ResourceVersion: mid.ResourceVersion}
	for {
		p := list(opts)
		if storage.FormatResourceVersion(p.ResourceVersion) != mid.ResourceVersion {
			t.Fatalf("page at %d, want %s", p.ResourceVersion, mid.ResourceVersion)
		}
		paged = append(paged, p.Items...)
		if p.Continue == "" {
			break
		}
		opts = storage.ListOptions{Limit: 1, Continue: p.Continue}
	}
	if got, want := names(paged), []string{"ns/a@" + mid.ResourceVersion, "ns/b@" + b.ResourceVersion, "other/c@" + c.ResourceVersion}; !slices.Equal(got, want) {
		t.Errorf("pages at %s: %v, want %v", mid.ResourceVersion, got, want)
	}
	if g, err := h.cache.Get(h.ctx, "ns/a", storage.GetOptions{ResourceVersion: "0"}); err != nil || g.ResourceVersion != mid.ResourceVersion {
		t.Errorf("get at 0: %v, %v", g, err)
	}
	if g, err := h.cache.Get(h.ctx, "ns/a", storage.GetOptions{ResourceVersion: mid.ResourceVersion}); err != nil || g.ResourceVersion != mid.ResourceVersion {
		t.Errorf("get at %s: %v, %v", mid.ResourceVersion, g, err)
	}

	// An idle resource still answers consistent reads from memory: etcd's
	// revision moves elsewhere, and a progress notification catches up.
	put, err := h.client.Put(h.ctx, "/elsewhere", "x")
	if err != nil {
		t.Fatal(err)
	}
	idle := list(storage.ListOptions{})
	if idle.ResourceVersion < put.Header.Revision {
		t.Errorf("consistent list at %d, before a write at %d", idle.ResourceVersion, put.Header.Revision)
	}

	if n := h.src.lists.Load() - lists; n != 0 {
		t.Errorf("the cache sent %d lists to the store", n)
	}
	if n := h.src.gets.Load() - gets; n != 0 {
		t.Errorf("the cache sent %d gets to the store", n)
	}
}

// TestListsOutsideTheWindowGoToTheStore checks the delegation of reads the
// cache cannot answer.
func TestListsOutsideTheWindowGoToTheStore(t *testing.T) {
	h := newHarness(t, WithWindow(2))
	a := h.create("ns", "a")
	a2 := h.create("ns", "a2")
	p1, err := h.cache.GetList(h.ctx, storage.ListOptions{Limit: 1, ResourceVersion: a2.ResourceVersion,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
	if err != nil {
		t.Fatal(err)
	}
	h.create("ns", "b")
	h.create("ns", "c")
	last := h.create("ns", "d")
	waitRevision(t, h.cache, mustRV(t, last))
	lists := h.src.lists.Load()

	exact, err := h.cache.GetList(h.ctx, storage.ListOptions{ResourceVersion: a.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	if err != nil || exact.ResourceVersion != mustRV(t, a) || len(exact.Items) != 1 || exact.Items[0].Name != "a" {
		t.Fatalf("exact list at %s, outside the window: %v, %v", a.ResourceVersion, exact, err)
	}
	p2, err := h.cache.GetList(h.ctx, storage.ListOptions{Limit: 1, Continue: p1.Continue})
	if err != nil || p2.ResourceVersion != p1.ResourceVersion || len(p2.Items) != 1 || p2.Items[0].Name != "a2" {
		t.Fatalf("continue at %d, outside the window: %v, %v", p1.ResourceVersion, p2, err)
	}
	if n := h.src.lists.Load() - lists; n != 2 {
		t.Errorf("%d lists reached the store, want 2", n)
	}

	// Compacted in etcd as well: the store's ErrExpired comes through.
	if _, err := h.client.Compact(h.ctx, mustRV(t, last)); err != nil {
		t.Fatal(err)
	}
	_, err = h.cache.GetList(h.ctx, storage.ListOptions{ResourceVersion: a.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	if !errors.Is(err, storage.ErrExpired) {
		t.Errorf("exact list at compacted %s: %v, want ErrExpired", a.ResourceVersion, err)
	}
}

func TestNotReadyDelegates(t *testing.T) {
	h := newHarness(t)
	def := storagetest.Definition()
	release := h.src.hold()
	c, err := New(def, Source[*widget](h.src))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	if c.Ready() {
		t.Fatal("ready before the first list")
	}
	a, err := c.Create(h.ctx, "ns/a", storagetest.NewWidget("ns", "a", "red"))
	if err != nil {
		t.Fatal(err)
	}
	gets := h.src.gets.Load()
	if got, err := c.Get(h.ctx, "ns/a", storage.GetOptions{ResourceVersion: "0"}); err != nil || got.ResourceVersion != a.ResourceVersion {
		t.Errorf("get before ready: %v, %v", got, err)
	}
	if h.src.gets.Load() != gets+1 {
		t.Error("get before ready did not go to the store")
	}
	release()
	if err := c.WaitReady(h.ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Get(h.ctx, "ns/a", storage.GetOptions{ResourceVersion: a.ResourceVersion}); err != nil || got.ResourceVersion != a.ResourceVersion {
		t.Errorf("get once ready: %v, %v", got, err)
	}
}

func TestMetricsSharedAcrossCaches(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := newHarness(t, WithMetrics(reg))
	other := storagetest.Definition()
	other.Plural = "gadgets"
	newReadyCache[*widget](t, other, h.src, WithMetrics(reg))

	w := h.watch(storage.ListOptions{ResourceVersion: storage.FormatResourceVersion(h.cache.Revision())})
	h.create("ns", "a")
	next(t, w, 1, false)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			v := m.GetGauge().GetValue() + m.GetCounter().GetValue()
			got[f.GetName()+"/"+m.GetLabel()[0].GetValue()] = v
		}
	}
	for key, want := range map[string]float64{
		"apiloom_watch_cache_watchers/widgets.storagetest.apiloom.dev":                1,
		"apiloom_watch_cache_watchers/gadgets.storagetest.apiloom.dev":                0,
		"apiloom_watch_cache_events_dispatched_total/widgets.storagetest.apiloom.dev": 1,
	} {
		if v, ok := got[key]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", key, v, ok, want)
		}
	}
	w.Stop()
	w.Stop()
	if v := metricValue(t, h.cache.metrics.watchers); v != 0 {
		t.Errorf("watchers after Stop: %v", v)
	}
}

// TestRandomizedListsMatchStore compares the cache's lists at random
// revisions inside its window (snapshots rebuilt by undoing newer events),
// in random namespaces, with random selectors and page sizes, with the
// store's lists of etcd at the same revisions.
func TestRandomizedListsMatchStore(t *testing.T) {
	h := newHarness(t, WithWindow(128))
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	var revs []int64
	for range 300 {
		ns, name := []string{"a", "b", "c"}[rng.IntN(3)], fmt.Sprintf("k%d", rng.IntN(8))
		key := storage.Key(ns, name)
		var out *widget
		var err error
		switch rng.IntN(3) {
		case 0:
			out, err = h.cache.Create(h.ctx, key, storagetest.NewWidget(ns, name, "red", "tier", []string{"web", "db"}[rng.IntN(2)]))
		case 1:
			out, err = h.cache.GuaranteedUpdate(h.ctx, key, nil, func(w *widget) (*widget, error) {
				w.Labels["tier"] = []string{"web", "db"}[rng.IntN(2)]
				w.Spec.Size++
				return w, nil
			})
		default:
			out, err = h.cache.Delete(h.ctx, key, nil)
		}
		if err == nil {
			revs = append(revs, mustRV(t, out))
		}
	}
	waitRevision(t, h.cache, revs[len(revs)-1])
	h.cache.mu.RLock()
	windowStart := h.cache.hist.start
	h.cache.mu.RUnlock()
	lists := h.src.lists.Load()
	checked := 0
	for range 60 {
		rev := revs[rng.IntN(len(revs))]
		if rev < windowStart {
			continue
		}
		opts := storage.ListOptions{
			Namespace:            []string{"", "a", "b"}[rng.IntN(3)],
			ResourceVersion:      storage.FormatResourceVersion(rev),
			ResourceVersionMatch: metav1.ResourceVersionMatchExact,
			Limit:                int64(rng.IntN(4)),
		}
		if rng.IntN(2) == 0 {
			opts.Predicate.Label = labelSel(t, "tier=web")
		}
		got, want := pages(t, h.cache, opts), pages(t, h.src.Store, opts)
		if !slices.Equal(got, want) {
			t.Errorf("list %+v: cache %v, store %v", opts, got, want)
		}
		checked++
	}
	if n := h.src.lists.Load() - lists; n != 0 {
		t.Errorf("%d lists inside the window reached the store", n)
	}
	t.Logf("%d lists compared, window from %d to %d", checked, windowStart, revs[len(revs)-1])
}

// pages lists everything opts select, page by page, and describes each
// page: its items and whether it is complete.
func pages(t *testing.T, s storage.Interface[*widget], opts storage.ListOptions) []string {
	t.Helper()
	var out []string
	for {
		l, err := s.GetList(t.Context(), opts)
		if err != nil {
			t.Fatalf("list %+v: %v", opts, err)
		}
		remaining := "-"
		if l.RemainingItemCount != nil {
			remaining = fmt.Sprint(*l.RemainingItemCount)
		}
		out = append(out, fmt.Sprintf("%d %v more=%v remaining=%s", l.ResourceVersion, names(l.Items), l.Continue != "", remaining))
		if l.Continue == "" {
			return out
		}
		opts = storage.ListOptions{Namespace: opts.Namespace, Predicate: opts.Predicate, Limit: opts.Limit, Continue: l.Continue}
	}
}

func TestListCarriesEachItemsEncoding(t *testing.T) {
	h := newHarness(t)
	h.create("a", "x", "tier", "gold")
	last := h.create("b", "y")
	waitRevision(t, h.cache, mustRV(t, last))
	for _, opts := range []storage.ListOptions{
		{ResourceVersion: "0"},
		{ResourceVersion: "0", Limit: 1},
		{ResourceVersion: "0", Predicate: storage.Predicate{Label: labelSel(t, "tier=gold")}},
	} {
		l, err := h.cache.GetList(t.Context(), opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Raw) != len(l.Items) || len(l.Items) == 0 {
			t.Fatalf("%+v: %d items, %d encodings", opts, len(l.Items), len(l.Raw))
		}
		for i, obj := range l.Items {
			want, err := wire.EncodeObject(obj, obj.GroupVersionKind())
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(l.Raw[i], want) {
				t.Fatalf("item %d: encoding %s, want %s", i, l.Raw[i], want)
			}
		}
	}
}
