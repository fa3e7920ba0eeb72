package storagetest

import (
	"errors"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/storage"
)

const (
	notOlderThan = metav1.ResourceVersionMatchNotOlderThan
	exact        = metav1.ResourceVersionMatchExact
)

// rvs formats a revision as a resourceVersion.
func rvs(rev int64) string { return storage.FormatResourceVersion(rev) }

func testListResourceVersions(t *testing.T, e *env) {
	a := e.create("ns", "a", "red")
	b := e.create("ns", "b", "red")
	e.create("ns", "c", "red")
	a2 := e.update("ns", "a", func(w *Widget) { w.Spec.Size = 2 })
	cur := e.rev()

	// "": consistent, so at least every write so far.
	l := e.list(storage.ListOptions{})
	if l.ResourceVersion < rv(t, a2) {
		t.Errorf(`list RV "": at %d, before the last write %d`, l.ResourceVersion, rv(t, a2))
	}
	e.checkListAt(l, nil)

	// "0": any state, but a consistent one.
	e.checkListAt(e.list(storage.ListOptions{ResourceVersion: "0"}), nil)

	// N, NotOlderThan, and N without a match and without a limit: at least N.
	for _, opts := range []storage.ListOptions{
		{ResourceVersion: b.ResourceVersion, ResourceVersionMatch: notOlderThan},
		{ResourceVersion: b.ResourceVersion},
	} {
		l := e.list(opts)
		if l.ResourceVersion < rv(t, b) {
			t.Errorf("list %+v: at %d", opts, l.ResourceVersion)
		}
		e.checkListAt(l, nil)
	}

	// N, Exact, and N without a match but with a limit (legacy): exactly N.
	for _, opts := range []storage.ListOptions{
		{ResourceVersion: b.ResourceVersion, ResourceVersionMatch: exact},
		{ResourceVersion: b.ResourceVersion, Limit: 10},
	} {
		l := e.list(opts)
		if l.ResourceVersion != rv(t, b) {
			t.Errorf("list %+v: at %d, want exactly %d", opts, l.ResourceVersion, rv(t, b))
		}
		e.checkListAt(l, nil)
		if len(l.Items) != 2 || l.Items[0].ResourceVersion != a.ResourceVersion {
			t.Errorf("list %+v: items %v, want a and b as they were", opts, items(t, l.Items))
		}
	}

	// Ahead of etcd.
	tooLarge := rvs(cur + 1000)
	for _, opts := range []storage.ListOptions{
		{ResourceVersion: tooLarge, ResourceVersionMatch: notOlderThan},
		{ResourceVersion: tooLarge, ResourceVersionMatch: exact},
		{ResourceVersion: tooLarge, Limit: 10},
	} {
		if _, err := e.store.GetList(e.ctx, opts); !errors.Is(err, storage.ErrTooLargeResourceVersion) {
			t.Errorf("list %+v: %v, want ErrTooLargeResourceVersion", opts, err)
		}
	}
	if _, err := e.store.GetList(e.ctx, storage.ListOptions{ResourceVersion: "x"}); !errors.Is(err, storage.ErrInvalidResourceVersion) {
		t.Errorf("list at RV x: %v, want ErrInvalidResourceVersion", err)
	}
}

func testListCompacted(t *testing.T, e *env) {
	a := e.create("ns", "a", "red")
	e.create("ns", "b", "red")
	e.update("ns", "a", func(w *Widget) { w.Spec.Size = 2 })
	e.compact(e.rev())

	// An exact read of compacted history is impossible...
	for _, opts := range []storage.ListOptions{
		{ResourceVersion: a.ResourceVersion, ResourceVersionMatch: exact},
		{ResourceVersion: a.ResourceVersion, Limit: 10},
	} {
		_, err := e.store.GetList(e.ctx, opts)
		if !errors.Is(err, storage.ErrExpired) {
			t.Errorf("list %+v after compaction: %v, want ErrExpired", opts, err)
		}
	}
	// ...but "at least N" never expires.
	for _, opts := range []storage.ListOptions{
		{ResourceVersion: a.ResourceVersion, ResourceVersionMatch: notOlderThan},
		{ResourceVersion: a.ResourceVersion},
		{ResourceVersion: a.ResourceVersion, ResourceVersionMatch: notOlderThan, Limit: 1},
	} {
		l := e.list(opts)
		if l.ResourceVersion < rv(t, a) {
			t.Errorf("list %+v: at %d", opts, l.ResourceVersion)
		}
	}
}

// listAll follows continue tokens from opts to the end, checking that every
// page is read at the first page's revision and that only a page with a
// continue token is full.
func (e *env) listAll(opts storage.ListOptions) ([]*Widget, []*storage.List[*Widget]) {
	e.t.Helper()
	var all []*Widget
	var pages []*storage.List[*Widget]
	for {
		l := e.list(opts)
		pages = append(pages, l)
		all = append(all, l.Items...)
		if l.ResourceVersion != pages[0].ResourceVersion {
			e.t.Fatalf("page %d at %d, first page at %d", len(pages), l.ResourceVersion, pages[0].ResourceVersion)
		}
		if opts.Limit > 0 && int64(len(l.Items)) > opts.Limit {
			e.t.Fatalf("page %d has %d items, limit %d", len(pages), len(l.Items), opts.Limit)
		}
		if l.Continue == "" {
			return all, pages
		}
		if int64(len(l.Items)) != opts.Limit {
			e.t.Fatalf("page %d has %d items and a continue token, want a full page of %d", len(pages), len(l.Items), opts.Limit)
		}
		if len(pages) > 100 {
			e.t.Fatal("more than 100 pages")
		}
		opts.Continue = l.Continue
		opts.ResourceVersion, opts.ResourceVersionMatch = "", ""
	}
}

func testListPagination(t *testing.T, e *env) {
	for _, name := range []string{"w0", "w1", "w2", "w3", "w4"} {
		e.create("ns", name, "red")
	}

	p1 := e.list(storage.ListOptions{Limit: 2})
	if len(p1.Items) != 2 || p1.Continue == "" || p1.RemainingItemCount == nil || *p1.RemainingItemCount != 3 {
		t.Fatalf("page 1: %v continue %q remaining %v", items(t, p1.Items), p1.Continue, p1.RemainingItemCount)
	}
	e.checkListAt(&storage.List[*Widget]{Items: p1.Items, ResourceVersion: p1.ResourceVersion}, func(w *Widget) bool {
		return w.Name <= "w1"
	})

	// Writes after the first page do not show in later pages.
	e.delete("ns", "w2")
	e.create("ns", "w5", "red")

	p2 := e.list(storage.ListOptions{Limit: 2, Continue: p1.Continue, ResourceVersion: "0"})
	if p2.ResourceVersion != p1.ResourceVersion || p2.RemainingItemCount == nil || *p2.RemainingItemCount != 1 {
		t.Fatalf("page 2 at %d remaining %v", p2.ResourceVersion, p2.RemainingItemCount)
	}
	p3 := e.list(storage.ListOptions{Limit: 2, Continue: p2.Continue})
	if p3.Continue != "" || p3.RemainingItemCount != nil {
		t.Fatalf("page 3: continue %q remaining %v, want the end", p3.Continue, p3.RemainingItemCount)
	}
	all := append(append(p1.Items, p2.Items...), p3.Items...)
	e.checkListAt(&storage.List[*Widget]{Items: all, ResourceVersion: p1.ResourceVersion}, nil)

	// A limit beyond the end gives one page.
	l := e.list(storage.ListOptions{Limit: 100})
	if l.Continue != "" || l.RemainingItemCount != nil {
		t.Errorf("limit 100: continue %q remaining %v", l.Continue, l.RemainingItemCount)
	}
	e.checkListAt(l, nil)

	// Limit 1 all the way through.
	got, _ := e.listAll(storage.ListOptions{Limit: 1})
	e.checkListAt(&storage.List[*Widget]{Items: got, ResourceVersion: l.ResourceVersion}, nil)
}

func testListContinueErrors(t *testing.T, e *env) {
	e.create("ns", "a", "red")
	e.create("ns", "b", "red")
	p1 := e.list(storage.ListOptions{Limit: 1})
	if p1.Continue == "" {
		t.Fatal("no continue token")
	}
	if _, err := e.store.GetList(e.ctx, storage.ListOptions{Limit: 1, Continue: p1.Continue, ResourceVersion: rvs(p1.ResourceVersion)}); !errors.Is(err, storage.ErrInvalidContinue) {
		t.Errorf("continue with a resourceVersion: %v, want ErrInvalidContinue", err)
	}
	for _, token := range []string{
		"garbage!",
		storage.EncodeContinue("../x\x00", p1.ResourceVersion),
		storage.EncodeContinue("ns/../../other\x00", p1.ResourceVersion),
		storage.EncodeContinue("", p1.ResourceVersion),
		storage.EncodeContinue("ns/a\x00", 0),
	} {
		if _, err := e.store.GetList(e.ctx, storage.ListOptions{Limit: 1, Continue: token}); !errors.Is(err, storage.ErrInvalidContinue) {
			t.Errorf("continue %q: %v, want ErrInvalidContinue", token, err)
		}
	}
}

func testListContinueExpired(t *testing.T, e *env) {
	for _, name := range []string{"a", "b", "c", "d"} {
		e.create("ns", name, "red")
	}
	p1 := e.list(storage.ListOptions{Limit: 2})
	e.delete("ns", "c")
	e.create("ns", "e", "red")
	e.compact(e.rev())

	_, err := e.store.GetList(e.ctx, storage.ListOptions{Limit: 2, Continue: p1.Continue})
	se, ok := storage.AsError(err)
	if !errors.Is(err, storage.ErrExpired) || !ok || se.Continue == "" {
		t.Fatalf("expired continue: %v, want ErrExpired with a fresh token", err)
	}
	// The fresh token goes on from the same key at the latest revision.
	rest, pages := e.listAll(storage.ListOptions{Limit: 2, Continue: se.Continue})
	want := e.log.expectedItems(t, pages[0].ResourceVersion, func(w *Widget) bool { return w.Name > "b" })
	if got := items(t, rest); !slices.Equal(got, want) {
		t.Errorf("after fresh token: %v, want %v", got, want)
	}
}

func testListSelectors(t *testing.T, e *env) {
	seed(e)
	cases := []struct {
		name string
		pred storage.Predicate
		keep func(*Widget) bool
	}{
		{"label", labelPred(t, "tier=web"), func(w *Widget) bool { return w.Labels["tier"] == "web" }},
		{"label set", labelPred(t, "tier in (web,db),tier!=db"), func(w *Widget) bool { return w.Labels["tier"] == "web" }},
		{"field", fieldPred(t, "spec.color=red"), func(w *Widget) bool { return w.Spec.Color == "red" }},
		{"name", fieldPred(t, "metadata.name=a2"), func(w *Widget) bool { return w.Name == "a2" }},
		{"namespace", fieldPred(t, "metadata.namespace=b"), func(w *Widget) bool { return w.Namespace == "b" }},
		{"both", storage.Predicate{Label: labelPred(t, "tier=db").Label, Field: fieldPred(t, "spec.color!=blue").Field},
			func(w *Widget) bool { return w.Labels["tier"] == "db" && w.Spec.Color != "blue" }},
		{"none", labelPred(t, "tier=cache"), func(*Widget) bool { return false }},
	}
	for _, tc := range cases {
		l := e.list(storage.ListOptions{Predicate: tc.pred})
		if l.Continue != "" || l.RemainingItemCount != nil {
			t.Errorf("%s: continue %q remaining %v", tc.name, l.Continue, l.RemainingItemCount)
		}
		e.checkListAt(l, tc.keep)
	}
}

func testListSelectorPagination(t *testing.T, e *env) {
	seed(e)
	pred := fieldPred(t, "spec.color=red")
	got, pages := e.listAll(storage.ListOptions{Predicate: pred, Limit: 1})
	for i, p := range pages {
		if p.RemainingItemCount != nil {
			t.Errorf("page %d of a filtered list has remainingItemCount %d", i+1, *p.RemainingItemCount)
		}
	}
	e.checkListAt(&storage.List[*Widget]{Items: got, ResourceVersion: pages[0].ResourceVersion}, func(w *Widget) bool {
		return w.Spec.Color == "red"
	})
}

func testListNamespace(t *testing.T, e *env) {
	seed(e)
	inA := func(w *Widget) bool { return w.Namespace == "a" }
	e.checkListAt(e.list(storage.ListOptions{Namespace: "a"}), inA)

	got, pages := e.listAll(storage.ListOptions{Namespace: "a", Limit: 2})
	e.checkListAt(&storage.List[*Widget]{Items: got, ResourceVersion: pages[0].ResourceVersion}, inA)
	if r := pages[0].RemainingItemCount; r == nil || *r != 1 {
		t.Errorf("namespace a, limit 2: remaining %v, want 1", r)
	}

	// A namespace's name is not a key prefix of a longer one's.
	e.create("ab", "x", "red")
	e.checkListAt(e.list(storage.ListOptions{Namespace: "a"}), inA)

	empty := e.list(storage.ListOptions{Namespace: "none"})
	if len(empty.Items) != 0 || empty.ResourceVersion == 0 {
		t.Errorf("empty namespace: %d items at %d", len(empty.Items), empty.ResourceVersion)
	}
	// A continue token from one namespace does not page through another.
	if _, err := e.store.GetList(e.ctx, storage.ListOptions{Namespace: "b", Limit: 2, Continue: pages[0].Continue}); !errors.Is(err, storage.ErrInvalidContinue) {
		t.Errorf("namespace a's token in namespace b: %v, want ErrInvalidContinue", err)
	}
}

// seed creates the objects the selector tests filter:
//
//	a/a1 red web, a/a2 blue db, a/a3 red db, b/b1 red web, b/b2 green db
func seed(e *env) {
	e.create("a", "a1", "red", "tier", "web")
	e.create("a", "a2", "blue", "tier", "db")
	e.create("a", "a3", "red", "tier", "db")
	e.create("b", "b1", "red", "tier", "web")
	e.create("b", "b2", "green", "tier", "db")
}
