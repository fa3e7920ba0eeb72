package storagetest

import (
	"context"
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/server/storage"
)

func ptr[T any](v T) *T { return &v }

func testWatchFromResourceVersion(t *testing.T, e *env) {
	x := e.create("w", "x", "red")
	// Written before the watch starts but after its resourceVersion.
	y := e.create("w", "y", "red")
	x2 := e.update("w", "x", func(w *Widget) { w.Spec.Size = 2 })

	s := e.watch(storage.ListOptions{ResourceVersion: x.ResourceVersion})
	yGone := e.delete("w", "y")
	ws := []want{added(y), modified(x2), deleted(yGone)}
	for i := range 20 {
		xi := e.update("w", "x", func(w *Widget) { w.Spec.Size = 10 + i })
		ws = append(ws, modified(xi))
	}
	got := s.expect(ws...)
	for _, ev := range got {
		checkKind(t, ev.Object)
	}
	if del := got[2].Object; del.Spec != y.Spec || del.UID != y.UID {
		t.Errorf("DELETED carries %+v, want y's last state", del)
	}
	// Nothing else came between: the next event is the next write.
	z := e.create("w", "z", "red")
	s.expect(added(z))
}

func testWatchInitialState(t *testing.T, e *env) {
	x := e.create("w", "x", "red")
	y := e.create("w", "y", "red")
	for i, version := range []string{"", "0"} {
		s := e.watch(storage.ListOptions{Namespace: "w", ResourceVersion: version})
		if version == "" {
			// A consistent start: exactly the current objects first.
			first := s.next(2)
			sortEvents(first)
			checkEvents(t, first, added(x), added(y))
		}
		z := e.create("w", "z"+rvs(int64(i)), "red")
		// "0" may start from older state; either way every object arrives
		// as ADDED exactly once, and the new one last.
		seen := map[string]bool{}
		if version == "" {
			seen["x"], seen["y"] = true, true
		}
		for !seen[z.Name] {
			ev := s.next(1)[0]
			if ev.Type != watch.Added || seen[ev.Object.Name] {
				t.Fatalf("RV %q: unexpected %s %s after %v", version, ev.Type, ev.Object.Name, seen)
			}
			seen[ev.Object.Name] = true
		}
		if !seen["x"] || !seen["y"] {
			t.Errorf("RV %q: saw %v, want x, y and %s", version, seen, z.Name)
		}
	}
}

func testWatchList(t *testing.T, e *env) {
	x := e.create("w", "x", "red")
	y := e.create("w", "y", "red")
	cur := e.rev()

	s := e.watch(storage.ListOptions{
		Namespace: "w", SendInitialEvents: ptr(true), ResourceVersionMatch: notOlderThan, AllowBookmarks: true,
	})
	initial := s.next(2)
	sortEvents(initial)
	checkEvents(t, initial, added(x), added(y))
	end := s.next(1)[0]
	if end.Type != watch.Bookmark || end.Object.Annotations[metav1.InitialEventsAnnotationKey] != "true" {
		t.Fatalf("after initial events: %s %+v, want the initial-events-end BOOKMARK", end.Type, end.Object.ObjectMeta)
	}
	checkKind(t, end.Object)
	snapshot := rv(t, end.Object)
	if snapshot < cur {
		t.Errorf("bookmark at %d, before the revision %d current when the watch started", snapshot, cur)
	}
	x2 := e.update("w", "x", func(w *Widget) { w.Spec.Size = 2 })
	s.expect(modified(x2))

	// Without AllowBookmarks there is no bookmark; live events follow.
	s = e.watch(storage.ListOptions{Namespace: "w", SendInitialEvents: ptr(true), ResourceVersionMatch: notOlderThan})
	initial = s.next(2)
	sortEvents(initial)
	checkEvents(t, initial, added(x2), added(y))
	y2 := e.update("w", "y", func(w *Widget) { w.Spec.Size = 2 })
	s.expect(modified(y2))
}

func testWatchListOldResourceVersion(t *testing.T, e *env) {
	x := e.create("w", "x", "red")
	x2 := e.update("w", "x", func(w *Widget) { w.Spec.Size = 2 })
	e.compact(e.rev())

	// NotOlderThan a compacted revision is not an error for watch-list.
	s := e.watch(storage.ListOptions{
		ResourceVersion: x.ResourceVersion, SendInitialEvents: ptr(true), ResourceVersionMatch: notOlderThan, AllowBookmarks: true,
	})
	s.expect(added(x2))
	if end := s.next(1)[0]; end.Type != watch.Bookmark || rv(t, end.Object) < rv(t, x2) {
		t.Fatalf("got %s at %s, want a bookmark at or after %s", end.Type, end.Object.ResourceVersion, x2.ResourceVersion)
	}
}

func testWatchNoInitialEvents(t *testing.T, e *env) {
	x := e.create("w", "x", "red")
	s := e.watch(storage.ListOptions{SendInitialEvents: ptr(false), ResourceVersionMatch: notOlderThan})
	y := e.create("w", "y", "red")
	s.expect(added(y))

	// From a resourceVersion: the changes after it.
	y2 := e.update("w", "y", func(w *Widget) { w.Spec.Size = 3 })
	s = e.watch(storage.ListOptions{SendInitialEvents: ptr(false), ResourceVersionMatch: notOlderThan, ResourceVersion: x.ResourceVersion})
	s.expect(added(y), modified(y2))
}

func testWatchTooLargeResourceVersion(t *testing.T, e *env) {
	e.create("w", "x", "red")
	tooLarge := rvs(e.rev() + 1000)
	w, err := e.store.Watch(e.ctx, storage.ListOptions{
		ResourceVersion: tooLarge, SendInitialEvents: ptr(true), ResourceVersionMatch: notOlderThan, AllowBookmarks: true,
	})
	if err == nil {
		t.Cleanup(w.Stop)
		err = (&stream{t: t, ctx: e.ctx, w: w, events: storage.NewBlocking(w)}).err()
	}
	if !errors.Is(err, storage.ErrTooLargeResourceVersion) {
		t.Errorf("watch-list at %s: %v, want ErrTooLargeResourceVersion", tooLarge, err)
	}
}

func testWatchPredicateTransitions(t *testing.T, e *env) {
	s := e.watch(storage.ListOptions{ResourceVersion: rvs(e.rev()), Predicate: labelPred(t, "tier=web")})

	e.create("w", "x", "red", "tier", "db") // not matching: nothing
	x1 := e.update("w", "x", func(w *Widget) { w.Labels["tier"] = "web" })
	x2 := e.update("w", "x", func(w *Widget) { w.Spec.Size = 7 })
	x3 := e.update("w", "x", func(w *Widget) { w.Labels["tier"] = "db" })
	e.delete("w", "x") // not matching before: nothing
	y := e.create("w", "y", "red", "tier", "web")
	yGone := e.delete("w", "y")
	z := e.create("w", "z", "red", "tier", "web")

	got := s.expect(added(x1), modified(x2), want{watch.Deleted, "x", rv(t, x3)}, added(y), deleted(yGone), added(z))
	// Leaving the selection delivers the last matching state at the
	// revision of the change.
	if left := got[2].Object; left.Labels["tier"] != "web" || left.Spec.Size != 7 {
		t.Errorf("DELETED on leaving carries %+v, want the state before the change", left)
	}
}

func testWatchFieldSelector(t *testing.T, e *env) {
	s := e.watch(storage.ListOptions{ResourceVersion: rvs(e.rev()), Predicate: fieldPred(t, "metadata.name=x")})
	x := e.create("w", "x", "red")
	e.create("w", "y", "red")
	x2 := e.update("w", "x", func(w *Widget) { w.Spec.Size = 2 })
	e.update("w", "y", func(w *Widget) { w.Spec.Size = 2 })
	xGone := e.delete("w", "x")
	e.delete("w", "y")
	xAgain := e.create("w", "x", "blue")
	s.expect(added(x), modified(x2), deleted(xGone), added(xAgain))
}

func testWatchNamespace(t *testing.T, e *env) {
	s := e.watch(storage.ListOptions{Namespace: "a", ResourceVersion: rvs(e.rev())})
	e.create("b", "x", "red")
	y := e.create("a", "y", "red")
	e.create("ab", "z", "red") // "a" is a prefix of "ab" but not its namespace
	e.create("b", "w", "red")
	v := e.create("a", "v", "red")
	s.expect(added(y), added(v))
	e.delete("b", "x")
	yGone := e.delete("a", "y")
	s.expect(deleted(yGone))
}

func testWatchExpired(t *testing.T, e *env) {
	x := e.create("w", "x", "red")
	e.update("w", "x", func(w *Widget) { w.Spec.Size = 2 })
	e.update("w", "x", func(w *Widget) { w.Spec.Size = 3 })
	e.compact(e.rev())

	w, err := e.store.Watch(e.ctx, storage.ListOptions{ResourceVersion: x.ResourceVersion})
	if err == nil {
		t.Cleanup(w.Stop)
		err = (&stream{t: t, ctx: e.ctx, w: w, events: storage.NewBlocking(w)}).err()
	}
	if !errors.Is(err, storage.ErrExpired) {
		t.Errorf("watch from compacted %s: %v, want ErrExpired", x.ResourceVersion, err)
	}
}

func testWatchStop(t *testing.T, e *env) {
	s := e.watch(storage.ListOptions{ResourceVersion: rvs(e.rev())})
	x := e.create("w", "x", "red")
	s.expect(added(x))
	s.w.Stop()
	if err := s.err(); !errors.Is(err, io.EOF) {
		t.Errorf("Next after Stop: %v, want io.EOF", err)
	}
	s.w.Stop() // twice is fine

	s = e.watch(storage.ListOptions{ResourceVersion: rvs(e.rev())})
	ctx, cancel := context.WithCancel(e.ctx)
	cancel()
	if _, err := s.events.Next(ctx, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Next with a cancelled context: %v, want context.Canceled", err)
	}
}

// testWatchPollAndNotify drives a watcher as a transport without a
// goroutine per watch does: Poll never blocks, NotifyOnce wakes when a
// later Poll has something, and a stopped watcher's Poll ends with io.EOF.
func testWatchPollAndNotify(t *testing.T, e *env) {
	s := e.watch(storage.ListOptions{ResourceVersion: rvs(e.rev())})
	w := s.w
	if evs, err := w.Poll(e.ctx, nil); len(evs) != 0 || err != nil {
		t.Fatalf("Poll of an idle watch: %d events, %v", len(evs), err)
	}
	woken := make(chan struct{}, 1)
	wake := func() {
		select {
		case woken <- struct{}{}:
		default:
		}
	}
	w.NotifyOnce(wake)
	x := e.create("w", "x", "red")
	select {
	case <-woken:
	case <-time.After(eventTimeout):
		t.Fatal("NotifyOnce did not wake for an event")
	}
	var evs []storage.Event[*Widget]
	for len(evs) == 0 {
		var err error
		if evs, err = w.Poll(e.ctx, evs); err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			w.NotifyOnce(wake)
			<-woken
		}
	}
	if evs[0].Type != watch.Added || evs[0].Object.ResourceVersion != x.ResourceVersion {
		t.Fatalf("got %s %s, want ADDED %s", evs[0].Type, evs[0].Object.ResourceVersion, x.ResourceVersion)
	}
	// A reader waiting for the watcher is woken by Stop, from another
	// goroutine, and sees the end.
	w.NotifyOnce(wake)
	select {
	case <-woken: // a bookmark or another event may wake it first; drain
		if _, err := w.Poll(e.ctx, nil); err != nil {
			t.Fatal(err)
		}
		w.NotifyOnce(wake)
	default:
	}
	go w.Stop()
	select {
	case <-woken:
	case <-time.After(eventTimeout):
		t.Fatal("Stop did not wake the waiting reader")
	}
	if _, err := w.Poll(e.ctx, nil); !errors.Is(err, io.EOF) {
		t.Errorf("Poll after Stop: %v, want io.EOF", err)
	}
}

// sortEvents orders events by object name, for initial events, which come
// in any order.
func sortEvents(es []storage.Event[*Widget]) {
	slices.SortFunc(es, func(a, b storage.Event[*Widget]) int {
		switch {
		case a.Object.Name < b.Object.Name:
			return -1
		case a.Object.Name > b.Object.Name:
			return 1
		}
		return 0
	})
}

// checkEvents fails the test unless es match ws in order.
func checkEvents(t *testing.T, es []storage.Event[*Widget], ws ...want) {
	t.Helper()
	if len(es) != len(ws) {
		t.Fatalf("got %v, want %v", describe(es), ws)
	}
	for i, w := range ws {
		if !w.matches(es[i]) {
			t.Fatalf("got %v, want %v", describe(es), ws)
		}
		checkKind(t, es[i].Object)
	}
}
