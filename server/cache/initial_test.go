package cache

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"weak"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/server/storage"
)

// TestInitialEventsAreTheStartState changes objects while watchers are
// halfway through their initial events, a few per batch: what they get
// must still be exactly the state at their start revision, as the store
// lists it at that revision, followed by every change after it.
func TestInitialEventsAreTheStartState(t *testing.T) {
	h := newHarness(t, withMaxBatch(3))
	rng := rand.New(rand.NewPCG(1, 2))
	names := func(i int) (string, string) { return fmt.Sprintf("ns%d", i%3), fmt.Sprintf("w%02d", i) }
	for i := range 30 {
		ns, name := names(i)
		h.create(ns, name, "tier", []string{"a", "b"}[i%2])
	}
	waitRevision(t, h.cache, h.cache.Revision())

	yes := true
	cases := []storage.ListOptions{
		{SendInitialEvents: &yes, AllowBookmarks: true},
		{Namespace: "ns1", SendInitialEvents: &yes, AllowBookmarks: true},
		{SendInitialEvents: &yes, AllowBookmarks: true, Predicate: storage.Predicate{Label: labelSel(t, "tier=a")}},
	}
	watchers := make([]*storage.Blocking[*widget], len(cases))
	got := make([][]storage.Event[*widget], len(cases))
	for i, opts := range cases {
		watchers[i] = h.watch(opts)
		first, err := watchers[i].Next(h.ctx, nil) // the first batch is out
		if err != nil || len(first) == 0 {
			t.Fatalf("case %d: first batch %d events, %v", i, len(first), err)
		}
		got[i] = first
	}

	// Change objects behind and ahead of every cursor: updates (some that
	// move an object out of the selector), deletes and creates.
	var changes []*widget
	for i := range 30 {
		ns, name := names(i)
		switch rng.IntN(4) {
		case 0:
			changes = append(changes, h.update(ns, name, func(w *widget) { w.Labels["tier"] = "c" }))
		case 1:
			changes = append(changes, h.delete(ns, name))
		case 2:
			changes = append(changes, h.create(ns, name+"x", "tier", "a"))
		}
	}
	waitRevision(t, h.cache, mustRV(t, changes[len(changes)-1]))

	for i, opts := range cases {
		w := watchers[i]
		var end int64
		var after []storage.Event[*widget] // events after the end bookmark
		for end == 0 {
			evs, err := w.Next(h.ctx, nil)
			if err != nil {
				t.Fatalf("case %d: %v", i, err)
			}
			for _, e := range evs {
				switch {
				case e.Type == watch.Bookmark:
					if e.Object.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
						end = mustRV(t, e.Object)
					}
				case end != 0:
					after = append(after, e)
				default:
					got[i] = append(got[i], e)
				}
			}
		}
		list, err := h.src.Store.GetList(h.ctx, storage.ListOptions{
			Namespace: opts.Namespace, Predicate: opts.Predicate,
			ResourceVersion: storage.FormatResourceVersion(end), ResourceVersionMatch: metav1.ResourceVersionMatchExact,
		})
		if err != nil {
			t.Fatal(err)
		}
		want := make([]string, len(list.Items))
		for j, it := range list.Items {
			want[j] = it.Namespace + "/" + it.Name + "@" + it.ResourceVersion
		}
		have := make([]string, len(got[i]))
		for j, e := range got[i] {
			if e.Type != watch.Added {
				t.Fatalf("case %d: initial event %d is %s", i, j, e.Type)
			}
			checkFrame(t, e)
			have[j] = e.Object.Namespace + "/" + e.Object.Name + "@" + e.Object.ResourceVersion
		}
		if !slices.Equal(have, want) {
			t.Errorf("case %d: initial events\n%v\nwant the state at %d\n%v", i, have, end, want)
		}

		// Then the changes, each exactly once, as the selector sees them.
		var live []storage.Event[*widget]
		for _, c := range changes {
			if (opts.Namespace == "" || c.Namespace == opts.Namespace) && opts.Predicate.Label == nil {
				live = append(live, storage.Event[*widget]{Object: c})
			}
		}
		if opts.Predicate.Label != nil {
			continue // which changes a selector sees is the random test's matter
		}
		evs := after
		if len(live) > len(after) {
			evs = append(evs, next(t, w, len(live)-len(after), false)...)
		}
		if len(evs) != len(live) {
			t.Fatalf("case %d: %d live events, want %d", i, len(evs), len(live))
		}
		for j := range live {
			if evs[j].Object.ResourceVersion != live[j].Object.ResourceVersion {
				t.Fatalf("case %d: live event %d at %s, want %s", i, j, evs[j].Object.ResourceVersion, live[j].Object.ResourceVersion)
			}
		}
	}
}

// TestUnreadInitialEventsPinNothing starts a watch that owes its client
// every object and never reads it. Once writers have replaced every object
// and the history has moved past their old versions, nothing may keep
// those versions alive: a client that does not read costs its cursor, not
// a copy of the state. When it does read, its start revision is gone, and
// it ends with ErrExpired rather than a mix of states.
func TestUnreadInitialEventsPinNothing(t *testing.T) {
	const n, window = 60, 8
	h := newHarness(t, WithWindow(window))
	for i := range n {
		h.create("ns", fmt.Sprintf("w%02d", i))
	}
	waitRevision(t, h.cache, h.cache.Revision())
	old := make([]weak.Pointer[widget], n)
	for i := range n {
		obj, err := h.cache.Get(h.ctx, storage.Key("ns", fmt.Sprintf("w%02d", i)), storage.GetOptions{ResourceVersion: "0"})
		if err != nil {
			t.Fatal(err)
		}
		old[i] = weak.Make(obj)
	}

	stalled := h.watch(storage.ListOptions{ResourceVersion: "0"})
	var last *widget
	for i := range n {
		last = h.update("ns", fmt.Sprintf("w%02d", i), func(w *widget) { w.Spec.Size++ })
	}
	waitRevision(t, h.cache, mustRV(t, last))

	runtime.GC()
	alive := 0
	for _, p := range old {
		if p.Value() != nil {
			alive++
		}
	}
	// The window still holds the last updates, whose previous versions it
	// needs; every older version must be gone.
	if alive > window {
		t.Errorf("%d of %d replaced versions are still alive; the history holds at most %d", alive, n, window)
	}
	if err := nextErr(t, stalled); !errors.Is(err, storage.ErrExpired) {
		t.Errorf("the stalled watcher ended with %v, want ErrExpired", err)
	}
}
