package cache

import (
	"context"
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/server/storage"
)

// poller drives a watcher as a transport without a goroutine per watch
// does: Poll, and when that finds nothing, NotifyOnce with a wake that
// signals woken.
type poller struct {
	t     *testing.T
	w     storage.Watcher[*widget]
	woken chan struct{}
	wake  func()
}

func newPoller(t *testing.T, w storage.Watcher[*widget]) *poller {
	t.Helper()
	p := &poller{t: t, w: w, woken: make(chan struct{}, 1)}
	p.wake = func() {
		select {
		case p.woken <- struct{}{}:
		default:
		}
	}
	return p
}

// pollNothing polls, expecting nothing, and asks to be woken.
func (p *poller) pollNothing(ctx context.Context) {
	p.t.Helper()
	if evs, err := p.w.Poll(ctx, nil); len(evs) != 0 || err != nil {
		p.t.Fatalf("Poll: %d events, %v; want nothing", len(evs), err)
	}
	p.w.NotifyOnce(p.wake)
}

// waitWoken waits for the wake.
func (p *poller) waitWoken() {
	p.t.Helper()
	select {
	case <-p.woken:
	case <-time.After(waitTimeout):
		p.t.Fatal("not woken in time")
	}
}

// wasWoken reports whether the wake was called, consuming the signal.
func (p *poller) wasWoken() bool {
	select {
	case <-p.woken:
		return true
	default:
		return false
	}
}

// pollEvents polls once, expecting exactly n events (bookmarks included).
func (p *poller) pollEvents(ctx context.Context, n int) []storage.Event[*widget] {
	p.t.Helper()
	evs, err := p.w.Poll(ctx, nil)
	if err != nil || len(evs) != n {
		p.t.Fatalf("Poll: %d events, %v; want %d", len(evs), err, n)
	}
	return evs
}

// waiters returns the polled watchers waiting for events of ns ("" = all)
// and for the tick.
func (c *Cache[O]) waiters(ns string) (events, tick []*watcher[O]) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if ns == "" {
		return slices.Clone(c.pollAll), slices.Clone(c.pollTick)
	}
	return slices.Clone(c.pollNS[ns]), slices.Clone(c.pollTick)
}

func TestPollWakesOnEvent(t *testing.T) {
	h := newHarness(t)
	p := newPoller(t, h.polledWatch(storage.ListOptions{ResourceVersion: storage.FormatResourceVersion(h.cache.Revision())}))
	p.pollNothing(h.ctx)
	x := h.create("ns", "x")
	p.waitWoken()
	if e := p.pollEvents(h.ctx, 1)[0]; e.Type != watch.Added || e.Object.ResourceVersion != x.ResourceVersion {
		t.Fatalf("after the wake: %s at %s, want ADDED at %s", e.Type, e.Object.ResourceVersion, x.ResourceVersion)
	}
	// Having found events, Poll has no channels to wait on: NotifyOnce
	// wakes at once rather than risk waiting for nothing.
	p.w.NotifyOnce(p.wake)
	if !p.wasWoken() {
		t.Error("NotifyOnce after a Poll that found events did not wake at once")
	}
}

func TestPollEventBeforeNotifyIsNotLost(t *testing.T) {
	h := newHarness(t)
	p := newPoller(t, h.polledWatch(storage.ListOptions{ResourceVersion: storage.FormatResourceVersion(h.cache.Revision())}))
	if evs, err := p.w.Poll(h.ctx, nil); len(evs) != 0 || err != nil {
		t.Fatalf("Poll: %v %v", evs, err)
	}
	// The event lands between Poll and NotifyOnce.
	x := h.create("ns", "x")
	waitRevision(t, h.cache, mustRV(t, x))
	p.w.NotifyOnce(p.wake)
	if !p.wasWoken() {
		t.Fatal("an event between Poll and NotifyOnce did not wake at once")
	}
	if e := p.pollEvents(h.ctx, 1)[0]; e.Object.ResourceVersion != x.ResourceVersion {
		t.Fatalf("got %s, want %s", e.Object.ResourceVersion, x.ResourceVersion)
	}
	if evs, _ := h.cache.waiters(""); len(evs) != 0 {
		t.Errorf("%d watchers wait, want none", len(evs))
	}
}

func TestPollNamespacedWake(t *testing.T) {
	// A relist of the cache wakes every watcher, rightly; under heavy load
	// the source watch may break and relist in the middle, so the check
	// runs again on a fresh cache when that happened.
	for attempt := 1; ; attempt++ {
		if pollNamespacedWake(t) {
			return
		}
		if attempt == 3 {
			t.Fatal("the cache relisted during each of 3 attempts")
		}
		t.Logf("attempt %d: the cache relisted; again", attempt)
	}
}

// pollNamespacedWake runs TestPollNamespacedWake's check once; false if
// the cache relisted meanwhile, which voids it.
func pollNamespacedWake(t *testing.T) bool {
	h := newHarness(t)
	relists := metricValue(t, h.cache.metrics.relists)
	quiet := func() bool { return metricValue(t, h.cache.metrics.relists) == relists }
	from := storage.FormatResourceVersion(h.cache.Revision())
	a := newPoller(t, h.polledWatch(storage.ListOptions{Namespace: "a", ResourceVersion: from}))
	b := newPoller(t, h.polledWatch(storage.ListOptions{Namespace: "b", ResourceVersion: from}))
	all := newPoller(t, h.polledWatch(storage.ListOptions{ResourceVersion: from}))
	for _, p := range []*poller{a, b, all} {
		p.pollNothing(h.ctx)
	}
	h.create("b", "x")
	b.waitWoken()
	all.waitWoken()
	// The event's wake-up took b's list and the all-namespaces list under
	// wmu before calling any wake; a's list is untouched.
	evs, _ := h.cache.waiters("a")
	woken := a.wasWoken()
	if !quiet() {
		return false
	}
	if len(evs) != 1 || evs[0] != a.w {
		t.Fatalf("namespace a's waiters: %v, want its watcher", evs)
	}
	if woken {
		t.Fatal("a watcher of namespace a was woken by an event in b")
	}
	b.pollEvents(h.ctx, 1)
	all.pollEvents(h.ctx, 1)
	a.pollNothing(h.ctx) // already waiting: stays in the list once
	if evs, _ := h.cache.waiters("a"); len(evs) != 1 && quiet() {
		t.Fatalf("namespace a's waiters: %d, want 1", len(evs))
	}
	y := h.create("a", "y")
	a.waitWoken()
	if e := a.pollEvents(h.ctx, 1)[0]; e.Object.ResourceVersion != y.ResourceVersion {
		t.Fatalf("got %s, want %s", e.Object.ResourceVersion, y.ResourceVersion)
	}
	return true
}

func TestPollBookmarkTick(t *testing.T) {
	ticks := make(chan time.Time)
	h := newHarness(t, withTicker(ticks))
	tick := func() { ticks <- time.Now() }
	from := storage.FormatResourceVersion(h.cache.Revision())
	p := newPoller(t, h.polledWatch(storage.ListOptions{Namespace: "a", ResourceVersion: from, AllowBookmarks: true}))
	other := h.create("b", "x") // moves the revision, but not for namespace a
	waitRevision(t, h.cache, mustRV(t, other))

	p.pollNothing(h.ctx)
	tick()
	p.waitWoken()
	if bm := p.pollEvents(h.ctx, 1)[0]; bm.Type != watch.Bookmark || bm.Object.ResourceVersion != other.ResourceVersion {
		t.Fatalf("after a tick: %s at %s, want a BOOKMARK at %s", bm.Type, bm.Object.ResourceVersion, other.ResourceVersion)
	}

	// An idle tick wakes it for nothing; it waits again, in each list once.
	p.pollNothing(h.ctx)
	tick()
	p.waitWoken()
	p.pollNothing(h.ctx)
	p.w.NotifyOnce(p.wake)
	if evs, tk := h.cache.waiters("a"); len(evs) != 1 || len(tk) != 1 {
		t.Fatalf("waiting for events %d times and for the tick %d times, want once each", len(evs), len(tk))
	}
}

func TestPollBookmarkBeforeDeadline(t *testing.T) {
	h := newHarness(t, withTicker(make(chan time.Time)))
	from := storage.FormatResourceVersion(h.cache.Revision())
	other := h.create("b", "x")
	waitRevision(t, h.cache, mustRV(t, other))

	ctx, cancel := context.WithTimeout(t.Context(), finalBookmarkLead+500*time.Millisecond)
	defer cancel()
	w, err := h.cache.Watch(ctx, storage.ListOptions{Namespace: "a", ResourceVersion: from, AllowBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	p := newPoller(t, w)
	p.pollNothing(ctx)
	p.waitWoken()
	if bm := p.pollEvents(ctx, 1)[0]; bm.Type != watch.Bookmark || bm.Object.ResourceVersion != other.ResourceVersion {
		t.Fatalf("got %s at %s, want a BOOKMARK at %s", bm.Type, bm.Object.ResourceVersion, other.ResourceVersion)
	}
	if ctx.Err() != nil {
		t.Fatal("the bookmark came after the deadline")
	}
	// Then the deadline: Poll reports it, as Next does.
	p.pollNothing(ctx)
	<-ctx.Done()
	if _, err := p.w.Poll(ctx, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Poll after the deadline: %v", err)
	}
}

func TestPollCloseWakes(t *testing.T) {
	h := newHarness(t, withTicker(make(chan time.Time)))
	from := storage.FormatResourceVersion(h.cache.Revision())
	ps := []*poller{
		newPoller(t, h.polledWatch(storage.ListOptions{ResourceVersion: from})),
		newPoller(t, h.polledWatch(storage.ListOptions{Namespace: "a", ResourceVersion: from, AllowBookmarks: true})),
	}
	for _, p := range ps {
		p.pollNothing(h.ctx)
	}
	// late found nothing before Close and asks to be woken after it.
	late := newPoller(t, h.polledWatch(storage.ListOptions{ResourceVersion: from}))
	if evs, err := late.w.Poll(h.ctx, nil); len(evs) != 0 || err != nil {
		t.Fatalf("Poll: %v %v", evs, err)
	}
	h.cache.Close()
	late.w.NotifyOnce(late.wake)
	if !late.wasWoken() {
		t.Error("NotifyOnce on a closed cache did not wake at once")
	}
	for _, p := range ps {
		p.waitWoken()
	}
	for _, p := range append(ps, late) {
		if _, err := p.w.Poll(h.ctx, nil); !errors.Is(err, io.EOF) {
			t.Errorf("Poll after Close: %v, want io.EOF", err)
		}
	}
}

// TestPollCloseSendsWhatCameBefore: a watch the cache's Close ends still
// sends every event the cache took in before closing, then ends. Poll
// reads whether the cache has closed before it looks for events, so an
// event that comes in while it looks is never hidden by the close.
func TestPollCloseSendsWhatCameBefore(t *testing.T) {
	h := newHarness(t, withTicker(make(chan time.Time)))
	from := storage.FormatResourceVersion(h.cache.Revision())
	p := newPoller(t, h.polledWatch(storage.ListOptions{ResourceVersion: from}))
	p.pollNothing(h.ctx)
	a, b := h.create("ns", "a"), h.create("ns", "b")
	waitRevision(t, h.cache, mustRV(t, b))
	h.cache.Close()
	p.waitWoken()
	evs := p.pollEvents(h.ctx, 2)
	for i, want := range []*widget{a, b} {
		if got := evs[i].Object.GetResourceVersion(); evs[i].Type != watch.Added || got != want.ResourceVersion {
			t.Errorf("event %d: %s at %s, want ADDED at %s", i, evs[i].Type, got, want.ResourceVersion)
		}
	}
	if evs, err := p.w.Poll(h.ctx, nil); len(evs) != 0 || !errors.Is(err, io.EOF) {
		t.Fatalf("Poll after the last event: %d events, %v; want io.EOF", len(evs), err)
	}
}

func TestPollStopLeavesNothingBehind(t *testing.T) {
	h := newHarness(t, withTicker(make(chan time.Time)))
	from := storage.FormatResourceVersion(h.cache.Revision())
	ctx, cancel := context.WithTimeout(h.ctx, time.Hour)
	defer cancel()
	var ps []*poller
	for range 3 {
		w, err := h.cache.Watch(ctx, storage.ListOptions{Namespace: "a", ResourceVersion: from, AllowBookmarks: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
		p := newPoller(t, w)
		p.pollNothing(ctx)
		ps = append(ps, p)
	}
	final := ps[1].w.(*watcher[*widget]).final
	if final == nil {
		t.Fatal("no timer for the bookmark before the deadline")
	}

	// Stopping the middle one moves the last into its place in both lists.
	ps[1].w.Stop()
	evs, tk := h.cache.waiters("a")
	for _, ws := range [][]*watcher[*widget]{evs, tk} {
		if len(ws) != 2 || slices.Contains(ws, ps[1].w.(*watcher[*widget])) {
			t.Fatalf("after Stop, waiters %v", ws)
		}
	}
	if final.Stop() {
		t.Error("Stop left the final bookmark's timer running")
	}
	ps[1].w.NotifyOnce(ps[1].wake)
	if !ps[1].wasWoken() {
		t.Error("NotifyOnce after Stop did not wake at once")
	}
	if _, err := ps[1].w.Poll(ctx, nil); !errors.Is(err, io.EOF) {
		t.Errorf("Poll after Stop: %v, want io.EOF", err)
	}

	// The others still work, from their moved places.
	x := h.create("a", "x")
	for _, p := range []*poller{ps[0], ps[2]} {
		p.waitWoken()
		if e := p.pollEvents(ctx, 1)[0]; e.Object.ResourceVersion != x.ResourceVersion {
			t.Fatalf("got %s, want %s", e.Object.ResourceVersion, x.ResourceVersion)
		}
	}
	for _, p := range []*poller{ps[0], ps[2]} {
		p.pollNothing(ctx)
		p.w.Stop()
	}
	if evs, tk := h.cache.waiters("a"); len(evs) != 0 || len(tk) != 0 {
		t.Fatalf("after stopping all, %d wait for events and %d for the tick", len(evs), len(tk))
	}
	h.cache.wmu.Lock()
	_, kept := h.cache.pollNS["a"]
	h.cache.wmu.Unlock()
	if kept {
		t.Error("an empty list of namespace a is kept")
	}
}
