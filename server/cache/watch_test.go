package cache

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/server/storage"
)

func ptr[T any](v T) *T { return &v }

// sameBytes reports whether a and b are the same memory, not just equal.
func sameBytes(a, b []byte) bool { return len(a) > 0 && len(a) == len(b) && &a[0] == &b[0] }

func TestWatchSharesEncodedEvents(t *testing.T) {
	h := newHarness(t)
	from := storage.FormatResourceVersion(h.cache.Revision())
	all := []*storage.Blocking[*widget]{h.watch(storage.ListOptions{ResourceVersion: from}), h.watch(storage.ListOptions{ResourceVersion: from})}
	web := storage.Predicate{Label: labelSel(t, "tier=web")}
	sel := []*storage.Blocking[*widget]{
		h.watch(storage.ListOptions{ResourceVersion: from, Predicate: web}),
		h.watch(storage.ListOptions{ResourceVersion: from, Predicate: web}),
	}

	h.create("ns", "x", "tier", "db")
	h.update("ns", "x", func(w *widget) { w.Labels["tier"] = "web" })
	x3 := h.update("ns", "x", func(w *widget) { w.Labels["tier"] = "db" })

	var got [2][]storage.Event[*widget]
	for i, w := range all {
		got[i] = next(t, w, 3, false)
	}
	for i, want := range []watch.EventType{watch.Added, watch.Modified, watch.Modified} {
		a, b := got[0][i], got[1][i]
		if a.Type != want || b.Type != want {
			t.Fatalf("event %d: %s and %s, want %s", i, a.Type, b.Type, want)
		}
		checkFrame(t, a)
		if !sameBytes(a.Frame, b.Frame) || a.Object != b.Object {
			t.Errorf("event %d: the two watchers got different copies", i)
		}
	}

	// The selective watchers see the object enter (ADDED) and leave
	// (DELETED, the last matching state at the leaving revision), and
	// share those encodings too.
	var sg [2][]storage.Event[*widget]
	for i, w := range sel {
		sg[i] = next(t, w, 2, false)
	}
	for i, want := range []watch.EventType{watch.Added, watch.Deleted} {
		a, b := sg[0][i], sg[1][i]
		if a.Type != want || b.Type != want {
			t.Fatalf("selective event %d: %s and %s, want %s", i, a.Type, b.Type, want)
		}
		checkFrame(t, a)
		if !sameBytes(a.Frame, b.Frame) || a.Object != b.Object {
			t.Errorf("selective event %d: the two watchers got different copies", i)
		}
	}
	if left := sg[0][1].Object; left.Labels["tier"] != "web" || left.ResourceVersion != x3.ResourceVersion {
		t.Errorf("leaving DELETED carries tier=%s at %s, want tier=web at %s", left.Labels["tier"], left.ResourceVersion, x3.ResourceVersion)
	}
	if entered, modified := sg[0][0], got[0][1]; entered.Object != modified.Object {
		t.Error("the entering ADDED does not share the MODIFIED event's object")
	}

	// Initial events share the objects' encodings as well.
	h.create("ns", "y")
	var initial [2][]storage.Event[*widget]
	for i := range initial {
		initial[i] = next(t, h.watch(storage.ListOptions{ResourceVersion: "0"}), 2, false)
	}
	for i := range initial[0] {
		a, b := initial[0][i], initial[1][i]
		if a.Type != watch.Added {
			t.Fatalf("initial event %d is %s", i, a.Type)
		}
		checkFrame(t, a)
		if !sameBytes(a.Frame, b.Frame) {
			t.Errorf("initial event %d for %s encoded twice", i, a.Object.Name)
		}
	}
}

func TestWatchListFromMemory(t *testing.T) {
	h := newHarness(t)
	x := h.create("a", "x")
	h.create("b", "y")

	w := h.watch(storage.ListOptions{Namespace: "a", SendInitialEvents: ptr(true),
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowBookmarks: true})
	evs := next(t, w, 2, true)
	if evs[0].Type != watch.Added || evs[0].Object.Name != "x" {
		t.Fatalf("first event %s %s, want ADDED x", evs[0].Type, evs[0].Object.Name)
	}
	end := evs[1]
	if end.Type != watch.Bookmark || end.Object.Annotations[metav1.InitialEventsAnnotationKey] != "true" {
		t.Fatalf("second event %s %v, want the initial-events-end bookmark", end.Type, end.Object.Annotations)
	}
	checkFrame(t, end)
	if rv, _ := storage.ParseResourceVersion(end.Object.ResourceVersion); rv < h.cache.Revision() || rv <= mustRV(t, x) {
		t.Errorf("initial-events-end at %d, cache at %d", rv, h.cache.Revision())
	}
	if n := h.src.watches.Load(); n != 1 {
		t.Errorf("%d watches on the store, want only the cache's own", n)
	}
	x2 := h.update("a", "x", func(w *widget) { w.Spec.Size = 5 })
	if e := next(t, w, 1, false)[0]; e.Type != watch.Modified || e.Object.ResourceVersion != x2.ResourceVersion {
		t.Errorf("after the initial events: %s %s", e.Type, e.Object.ResourceVersion)
	}
}

func mustRV(t *testing.T, w *widget) int64 {
	t.Helper()
	rv, err := storage.ParseResourceVersion(w.ResourceVersion)
	if err != nil {
		t.Fatal(err)
	}
	return rv
}

func TestWatcherFallingBehindExpires(t *testing.T) {
	h := newHarness(t, WithWindow(4))
	start := h.cache.Revision()
	from := storage.FormatResourceVersion(start)
	slow := h.watch(storage.ListOptions{ResourceVersion: from})
	fast := h.watch(storage.ListOptions{ResourceVersion: from})
	var last *widget
	for i := range 10 {
		last = h.create("ns", "w"+string(rune('a'+i)))
		if e := next(t, fast, 1, false)[0]; e.Object.ResourceVersion != last.ResourceVersion {
			t.Fatalf("fast watcher got %s, want %s", e.Object.ResourceVersion, last.ResourceVersion)
		}
	}
	err := nextErr(t, slow)
	if !errors.Is(err, storage.ErrExpired) {
		t.Fatalf("slow watcher: %v, want ErrExpired", err)
	}
	if _, err := slow.Next(h.ctx, nil); !errors.Is(err, storage.ErrExpired) {
		t.Errorf("slow watcher, again: %v, want ErrExpired", err)
	}
	if n := metricValue(t, h.cache.metrics.expired); n != 1 {
		t.Errorf("expired watchers metric %v, want 1", n)
	}

	// Watching from before the window fails the same way; from its start
	// works.
	waitRevision(t, h.cache, mustRV(t, last))
	h.cache.mu.RLock()
	windowStart := h.cache.hist.start
	h.cache.mu.RUnlock()
	old := h.watch(storage.ListOptions{ResourceVersion: storage.FormatResourceVersion(windowStart - 1)})
	if err := nextErr(t, old); !errors.Is(err, storage.ErrExpired) {
		t.Errorf("watch from %d, before the window: %v, want ErrExpired", windowStart-1, err)
	}
	edge := h.watch(storage.ListOptions{ResourceVersion: storage.FormatResourceVersion(windowStart)})
	if evs := next(t, edge, 4, false); evs[3].Object.ResourceVersion != last.ResourceVersion {
		t.Errorf("watch from the window's start ends at %s, want %s", evs[3].Object.ResourceVersion, last.ResourceVersion)
	}
}

func TestWatchBookmarks(t *testing.T) {
	ticks := make(chan time.Time)
	h := newHarness(t, withTicker(ticks))
	tick := func() { ticks <- time.Now() }
	from := storage.FormatResourceVersion(h.cache.Revision())
	w := h.watch(storage.ListOptions{Namespace: "a", ResourceVersion: from, AllowBookmarks: true})
	quiet := h.watch(storage.ListOptions{Namespace: "a", ResourceVersion: from})

	other := h.create("b", "x") // moves the revision, but not for namespace a
	waitRevision(t, h.cache, mustRV(t, other))
	tick()
	bm := next(t, w, 1, true)[0]
	if bm.Type != watch.Bookmark || bm.Object.ResourceVersion != other.ResourceVersion {
		t.Fatalf("after a tick: %s at %s, want a BOOKMARK at %s", bm.Type, bm.Object.ResourceVersion, other.ResourceVersion)
	}
	checkFrame(t, bm)
	if bm.Object.Annotations != nil {
		t.Errorf("periodic bookmark annotated %v", bm.Object.Annotations)
	}

	// Nothing moved: the next tick sends nothing, and the next event is
	// the next change.
	tick()
	y := h.create("a", "y")
	if e := next(t, w, 1, true)[0]; e.Type != watch.Added || e.Object.ResourceVersion != y.ResourceVersion {
		t.Errorf("after an idle tick: %s at %s, want ADDED y", e.Type, e.Object.ResourceVersion)
	}
	// A watcher that did not ask for bookmarks gets none.
	h.create("b", "z")
	tick()
	q := h.create("a", "q")
	evs := next(t, quiet, 2, true)
	if evs[0].Object.Name != "y" || evs[1].Type != watch.Added || evs[1].Object.ResourceVersion != q.ResourceVersion {
		t.Errorf("watcher without bookmarks: %s %s, %s %s", evs[0].Type, evs[0].Object.Name, evs[1].Type, evs[1].Object.Name)
	}
}

func TestWatchResumesAfterSourceBreaks(t *testing.T) {
	h := newHarness(t)
	w := h.watch(storage.ListOptions{ResourceVersion: storage.FormatResourceVersion(h.cache.Revision())})
	release := h.src.hold()
	h.src.fail(errors.New("connection reset"))
	a := h.create("ns", "a")
	b := h.create("ns", "b")
	a2 := h.update("ns", "a", func(w *widget) { w.Spec.Size = 2 })
	release()

	evs := next(t, w, 3, false)
	for i, want := range []*widget{a, b, a2} {
		if evs[i].Object.Name != want.Name || evs[i].Object.ResourceVersion != want.ResourceVersion {
			t.Errorf("event %d: %s@%s, want %s@%s", i, evs[i].Object.Name, evs[i].Object.ResourceVersion, want.Name, want.ResourceVersion)
		}
	}
	if n := h.src.lists.Load(); n != 1 {
		t.Errorf("the cache listed %d times, want once: a broken watch resumes", n)
	}
}

func TestRelistExpiresWatchersThatMissedEvents(t *testing.T) {
	h := newHarness(t)
	behind := h.watch(storage.ListOptions{ResourceVersion: storage.FormatResourceVersion(h.cache.Revision())})

	release := h.src.hold()
	h.src.fail(&storage.Error{Err: storage.ErrExpired})
	a := h.create("ns", "a")
	release()

	if err := nextErr(t, behind); !errors.Is(err, storage.ErrExpired) {
		t.Fatalf("watcher from before the relist: %v, want ErrExpired", err)
	}
	waitRevision(t, h.cache, mustRV(t, a))
	l, err := h.cache.GetList(h.ctx, storage.ListOptions{ResourceVersion: "0"})
	if err != nil || len(l.Items) != 1 || l.Items[0].ResourceVersion != a.ResourceVersion {
		t.Fatalf("list after relist: %v, %v", l, err)
	}
	if n := metricValue(t, h.cache.metrics.relists); n != 1 {
		t.Errorf("relists metric %v, want 1", n)
	}

	// A relist that finds nothing new leaves current watchers alone.
	current := h.watch(storage.ListOptions{ResourceVersion: storage.FormatResourceVersion(h.cache.Revision())})
	lists := h.src.lists.Load()
	h.src.fail(&storage.Error{Err: storage.ErrExpired})
	deadline := time.Now().Add(waitTimeout)
	for h.src.lists.Load() == lists || metricValue(t, h.cache.metrics.relists) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the cache did not relist")
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, with a deadline
	}
	b := h.create("ns", "b")
	if e := next(t, current, 1, false)[0]; e.Object.ResourceVersion != b.ResourceVersion {
		t.Errorf("after an empty relist: %s@%s, want b@%s", e.Object.Name, e.Object.ResourceVersion, b.ResourceVersion)
	}
}

func TestCloseEndsWatchers(t *testing.T) {
	h := newHarness(t)
	w := h.watch(storage.ListOptions{ResourceVersion: "0"})
	h.cache.Close()
	if err := nextErr(t, w); !errors.Is(err, io.EOF) {
		t.Errorf("watch after Close: %v, want io.EOF", err)
	}
	h.cache.Close()
}

func TestWatchStopFromAnotherGoroutine(t *testing.T) {
	h := newHarness(t)
	w := h.watch(storage.ListOptions{ResourceVersion: storage.FormatResourceVersion(h.cache.Revision())})
	errc := make(chan error, 1)
	go func() { _, err := w.Next(h.ctx, nil); errc <- err }()
	w.Stop()
	select {
	case err := <-errc:
		if !errors.Is(err, io.EOF) {
			t.Errorf("Next while stopping: %v, want io.EOF", err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("Next did not return after Stop")
	}
}

func TestWatchBookmarkBeforeDeadline(t *testing.T) {
	// The periodic ticker never ticks here: the only bookmark can be the
	// one before the deadline.
	h := newHarness(t, withTicker(make(chan time.Time)))
	from := storage.FormatResourceVersion(h.cache.Revision())
	other := h.create("b", "x") // moves the revision, but not for namespace a
	waitRevision(t, h.cache, mustRV(t, other))

	ctx, cancel := context.WithTimeout(t.Context(), finalBookmarkLead+500*time.Millisecond)
	defer cancel()
	w, err := h.cache.Watch(ctx, storage.ListOptions{Namespace: "a", ResourceVersion: from, AllowBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	evs, err := storage.NewBlocking(w).Next(ctx, nil)
	if err != nil || len(evs) != 1 {
		t.Fatalf("Next: %v %v", evs, err)
	}
	if evs[0].Type != watch.Bookmark || evs[0].Object.ResourceVersion != other.ResourceVersion {
		t.Fatalf("got %s at %s, want a BOOKMARK at %s", evs[0].Type, evs[0].Object.ResourceVersion, other.ResourceVersion)
	}
	if _, ok := ctx.Deadline(); !ok || ctx.Err() != nil {
		t.Fatalf("bookmark came after the deadline: %v", ctx.Err())
	}

	// A watch without bookmarks just ends at its deadline.
	quietCtx, cancelQuiet := context.WithTimeout(t.Context(), finalBookmarkLead+100*time.Millisecond)
	defer cancelQuiet()
	q, err := h.cache.Watch(quietCtx, storage.ListOptions{Namespace: "a", ResourceVersion: from})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Stop()
	if evs, err := storage.NewBlocking(q).Next(quietCtx, nil); len(evs) != 0 || err == nil {
		t.Fatalf("watch without bookmarks: %v %v, want no events and the context's error", evs, err)
	}
}
