package cache

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// change is one acknowledged write: the truth the watchers are held to.
type change struct {
	typ watch.EventType
	rev int64
	obj *widget // for DELETED, the last state with the deletion revision
}

// recorder collects the writes of concurrent writers.
type recorder struct {
	mu      sync.Mutex
	changes []change
}

func (r *recorder) add(typ watch.EventType, obj *widget) {
	r.mu.Lock()
	r.changes = append(r.changes, change{typ, rvOf(obj), obj})
	r.mu.Unlock()
}

// sorted returns the changes so far in revision order.
func (r *recorder) sorted() []change {
	r.mu.Lock()
	out := slices.Clone(r.changes)
	r.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].rev < out[j].rev })
	return out
}

// observed is what one watcher saw.
type observed struct {
	name      string
	opts      storage.ListOptions
	watchList bool
	start     int64 // the revision the live events follow (for watch-list: the snapshot)
	mu        sync.Mutex
	initial   []storage.Event[*widget]
	events    []storage.Event[*widget]
	err       error
	lastMark  int64  // the last periodic bookmark
	badMark   string // a bookmark that went backwards
}

// rvOf is obj's revision, or -1; for goroutines that may not fail a test.
func rvOf(obj *widget) int64 {
	rev, err := storage.ParseResourceVersion(obj.ResourceVersion)
	if err != nil {
		return -1
	}
	return rev
}

// done reports whether the watcher has ended or has seen every event of
// hist it should.
func (o *observed) done(t *testing.T, fieldsOf func(*widget) fields.Set, hist []change) bool {
	o.mu.Lock()
	start, got, err := o.start, len(o.events), o.err
	o.mu.Unlock()
	if err != nil {
		return true
	}
	if start < 0 {
		return false // initial events still coming
	}
	_, want := expected(t, fieldsOf, hist, o.opts, start)
	return got >= len(want)
}

func (o *observed) snapshot() (initial, events []storage.Event[*widget], err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.initial), slices.Clone(o.events), o.err
}

// TestRandomizedWatchersSeeExactHistory runs writers and watchers at once,
// with random start revisions and selectors, a small window, slow readers
// and source watches that break, and holds every watcher's stream to the
// history of acknowledged writes, filtered by its selector: in order,
// without gaps or duplicates. A watcher may end with ErrExpired (it fell
// behind, or its start was too old); what it got until then must still be
// exact.
func TestRandomizedWatchersSeeExactHistory(t *testing.T) {
	const (
		writers      = 4
		opsPerWriter = 120 // writer 0 starts a watcher every 6 writes
		lateWatchers = 12  // started once the writes are done
	)
	h := newHarness(t, WithWindow(64), WithBookmarkInterval(20*time.Millisecond))
	def := storagetest.Definition()
	rec := &recorder{}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)

	ctx, cancel := context.WithCancel(h.ctx)
	defer cancel()
	preds := []struct {
		ns   string
		pred string // label selector, or "field:" + field selector
	}{
		{"", ""}, {"a", ""}, {"", "tier=web"}, {"", "field:spec.color=red"},
		{"b", "tier in (web,db)"}, {"", "field:metadata.name=k3"}, {"c", "tier!=web"},
	}

	var wg sync.WaitGroup
	var obsMu sync.Mutex
	var all []*observed
	startWatcher := func(rng *rand.Rand, i int) {
		p := preds[rng.IntN(len(preds))]
		opts := storage.ListOptions{Namespace: p.ns, AllowBookmarks: rng.IntN(2) == 0}
		if p.pred != "" {
			if sel, ok := cutPrefix(p.pred, "field:"); ok {
				f, err := fields.ParseSelector(sel)
				if err != nil {
					t.Error(err)
					return
				}
				opts.Predicate.Field = f
			} else {
				opts.Predicate.Label = labelSel(t, p.pred)
			}
		}
		o := &observed{name: fmt.Sprintf("w%d %q %q", i, p.ns, p.pred)}
		hist := rec.sorted()
		switch mode := rng.IntN(3); {
		case mode == 0 || len(hist) == 0:
			// watch-list: the snapshot revision comes in the end bookmark.
			opts.SendInitialEvents, opts.AllowBookmarks = ptr(true), true
			opts.ResourceVersionMatch = metav1.ResourceVersionMatchNotOlderThan
			o.start, o.watchList = -1, true
		default:
			// Mostly recent revisions, some older than the window.
			o.start = hist[max(0, len(hist)-1-rng.IntN(min(len(hist), 100)))].rev
			opts.ResourceVersion = storage.FormatResourceVersion(o.start)
		}
		o.opts = opts
		w, err := h.cache.Watch(ctx, opts)
		if err != nil {
			t.Errorf("%s: watch: %v", o.name, err)
			return
		}
		read := storage.NewBlocking(w).Next
		obsMu.Lock()
		all = append(all, o)
		obsMu.Unlock()
		slow := rng.IntN(4) == 0
		pause := rand.New(rand.NewPCG(rng.Uint64(), 0)) // the reader's own
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer w.Stop()
			inInitial := o.start == -1
			var buf []storage.Event[*widget]
			for {
				var err error
				buf, err = read(ctx, buf[:0])
				o.mu.Lock()
				for _, e := range buf {
					switch {
					case e.Type == watch.Bookmark && e.Object.Annotations[metav1.InitialEventsAnnotationKey] == "true":
						o.start, inInitial = rvOf(e.Object), false
					case e.Type == watch.Bookmark:
						// A bookmark promises everything up to it was sent.
						rev := rvOf(e.Object)
						if rev < o.lastMark || (len(o.events) > 0 && rev < rvOf(o.events[len(o.events)-1].Object)) {
							o.badMark = fmt.Sprintf("bookmark at %d after %d events, last bookmark %d", rev, len(o.events), o.lastMark)
						}
						o.lastMark = rev
					case inInitial:
						o.initial = append(o.initial, e)
					default:
						o.events = append(o.events, e)
					}
				}
				if err != nil {
					o.err = err
				}
				o.mu.Unlock()
				if err != nil {
					return
				}
				if slow {
					time.Sleep(time.Duration(pause.IntN(3)) * time.Millisecond) // a slow client, not synchronisation
				}
			}
		}()
	}

	// Writers, with watchers started and source watches broken among them.
	var writersWG sync.WaitGroup
	for wr := range writers {
		writersWG.Add(1)
		go func() {
			defer writersWG.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(wr)))
			for op := range opsPerWriter {
				ns := []string{"a", "b", "c"}[rng.IntN(3)]
				name := fmt.Sprintf("k%d", rng.IntN(6))
				key := storage.Key(ns, name)
				switch rng.IntN(3) {
				case 0:
					obj := storagetest.NewWidget(ns, name, []string{"red", "blue"}[rng.IntN(2)], "tier", []string{"web", "db", "cache"}[rng.IntN(3)])
					out, err := h.cache.Create(ctx, key, obj)
					if err == nil {
						rec.add(watch.Added, out)
					} else if !errors.Is(err, storage.ErrExists) {
						t.Errorf("create %s: %v", key, err)
					}
				case 1:
					out, err := h.cache.GuaranteedUpdate(ctx, key, nil, func(w *widget) (*widget, error) {
						w.Spec.Size++
						if rng.IntN(2) == 0 {
							w.Labels["tier"] = []string{"web", "db", "cache"}[rng.IntN(3)]
						} else {
							w.Spec.Color = []string{"red", "blue"}[rng.IntN(2)]
						}
						return w, nil
					})
					if err == nil {
						rec.add(watch.Modified, out)
					} else if !errors.Is(err, storage.ErrNotFound) {
						t.Errorf("update %s: %v", key, err)
					}
				default:
					out, err := h.cache.Delete(ctx, key, nil)
					if err == nil {
						rec.add(watch.Deleted, out)
					} else if !errors.Is(err, storage.ErrNotFound) {
						t.Errorf("delete %s: %v", key, err)
					}
				}
				switch {
				case wr == 0 && op%6 == 0:
					startWatcher(rng, op)
				case wr == 1 && op%40 == 20:
					h.src.fail(errors.New("injected: connection reset"))
				case wr == 1 && op == 50:
					h.src.fail(&storage.Error{Err: storage.ErrExpired, Detail: "injected"})
				}
			}
		}()
	}
	writersWG.Wait()
	for i := range lateWatchers {
		startWatcher(rand.New(rand.NewPCG(seed, uint64(1000+i))), 1000+i)
	}
	hist := rec.sorted()
	last := hist[len(hist)-1].rev
	waitRevision(t, h.cache, last)

	// Every watcher gets exactly its filtered history, up to an error.
	expired, complete := 0, 0
	obsMu.Lock()
	watching := slices.Clone(all)
	obsMu.Unlock()
	for _, o := range watching {
		deadline := time.Now().Add(waitTimeout)
		for !o.done(t, def.Fields, hist) {
			if time.Now().After(deadline) {
				_, got, _ := o.snapshot()
				t.Fatalf("%s: only %d events after %v", o.name, len(got), waitTimeout)
			}
			time.Sleep(5 * time.Millisecond) // polling a condition, with a deadline
		}
		initial, got, err := o.snapshot()
		if o.start < 0 {
			if !errors.Is(err, storage.ErrExpired) {
				t.Errorf("%s: no initial-events-end bookmark, ended with %v", o.name, err)
			}
			expired++
			continue
		}
		wantInit, wantEvs := expected(t, def.Fields, hist, o.opts, o.start)
		if !o.watchList {
			wantInit = nil
		}
		checkInitial(t, o.name, initial, wantInit)
		checkStream(t, o.name, got, wantEvs)
		if o.badMark != "" {
			t.Errorf("%s: %s", o.name, o.badMark)
		}
		switch {
		case err == nil:
			complete++
		case errors.Is(err, storage.ErrExpired):
			expired++
		default:
			t.Errorf("%s: ended with %v", o.name, err)
		}
	}
	t.Logf("%d changes, %d watchers: %d complete, %d ended with ErrExpired; %d relists",
		len(hist), len(watching), complete, expired, int(metricValue(t, h.cache.metrics.relists)))
	if complete == 0 {
		t.Error("no watcher saw the whole history")
	}
	cancel()
	wg.Wait()
}

// pollingNext is Next made of Poll and NotifyOnce: it waits for the wake
// (or ctx) only when Poll found nothing.
func cutPrefix(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && s[:len(prefix)] == prefix {
		return s[len(prefix):], true
	}
	return s, false
}

// expected replays hist and returns the state at start that opts select
// (as ADDED changes, in key order) and the events after start a watcher
// with opts must see, with the store's predicate transitions.
func expected(t *testing.T, fieldsOf func(*widget) fields.Set, hist []change, opts storage.ListOptions, start int64) (initial, events []change) {
	state := map[string]*widget{}
	match := func(w *widget) bool {
		if w == nil || (opts.Namespace != "" && w.Namespace != opts.Namespace) {
			return false
		}
		return storage.Matches(opts.Predicate, w, fieldsOf)
	}
	snapshotTaken := false
	takeSnapshot := func() {
		for _, w := range state {
			if match(w) {
				initial = append(initial, change{watch.Added, mustRV(t, w), w})
			}
		}
		sort.Slice(initial, func(i, j int) bool { return key(initial[i].obj) < key(initial[j].obj) })
		snapshotTaken = true
	}
	for _, c := range hist {
		if c.rev > start && !snapshotTaken {
			takeSnapshot()
		}
		k := key(c.obj)
		prev := state[k]
		if c.typ == watch.Deleted {
			delete(state, k)
		} else {
			state[k] = c.obj
		}
		if c.rev <= start {
			continue
		}
		before, now := match(prev), c.typ != watch.Deleted && match(c.obj)
		switch {
		case c.typ == watch.Deleted && before:
			events = append(events, c)
		case c.typ == watch.Added && now:
			events = append(events, c)
		case c.typ == watch.Modified && before && now:
			events = append(events, c)
		case c.typ == watch.Modified && now:
			events = append(events, change{watch.Added, c.rev, c.obj})
		case c.typ == watch.Modified && before:
			events = append(events, change{watch.Deleted, c.rev, prev})
		}
	}
	if !snapshotTaken {
		takeSnapshot()
	}
	return initial, events
}

func key(w *widget) string { return storage.Key(w.Namespace, w.Name) }

func checkInitial(t *testing.T, name string, got []storage.Event[*widget], want []change) {
	t.Helper()
	sorted := slices.Clone(got)
	sort.Slice(sorted, func(i, j int) bool { return key(sorted[i].Object) < key(sorted[j].Object) })
	if len(sorted) != len(want) {
		t.Errorf("%s: %d initial events, want %d", name, len(sorted), len(want))
		return
	}
	for i, w := range want {
		g := sorted[i]
		if g.Type != watch.Added || key(g.Object) != key(w.obj) || mustRV(t, g.Object) != w.rev {
			t.Errorf("%s: initial event %d is %s %s@%s, want ADDED %s@%d", name, i, g.Type, key(g.Object), g.Object.ResourceVersion, key(w.obj), w.rev)
			return
		}
		checkFrame(t, g)
	}
}

func checkStream(t *testing.T, name string, got []storage.Event[*widget], want []change) {
	t.Helper()
	if len(got) > len(want) {
		t.Errorf("%s: %d events, want %d", name, len(got), len(want))
	}
	for i, g := range got {
		if i >= len(want) {
			break
		}
		w := want[i]
		if g.Type != w.typ || key(g.Object) != key(w.obj) || mustRV(t, g.Object) != w.rev {
			t.Errorf("%s: event %d is %s %s@%s, want %s %s@%d", name, i, g.Type, key(g.Object), g.Object.ResourceVersion, w.typ, key(w.obj), w.rev)
			return
		}
		if g.Type == watch.Deleted && g.Object.Spec != w.obj.Spec {
			t.Errorf("%s: event %d DELETED %s carries %+v, want %+v", name, i, key(g.Object), g.Object.Spec, w.obj.Spec)
		}
		checkFrame(t, g)
	}
}
