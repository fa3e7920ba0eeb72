package cache

import (
	"context"
	"io"
	"sync/atomic"
	"time"

	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
)

// A polled watcher is driven by a transport that has no goroutine per
// watch: the transport calls Poll when the stream may send and, when Poll
// finds nothing, NotifyOnce with a wake that makes it poll again. The
// watcher then waits as one entry in a list beside the wake-up channel it
// took (notify.go), so an idle watch costs this struct and that entry.

var _ storage.Watcher[resource.Object] = (*watcher[resource.Object])(nil)

// finalBookmarkLead is how long before a watch's deadline its last
// BOOKMARK goes out, as kube-apiserver's cacher does, so that a client
// resuming from it rarely meets 410 Expired.
const finalBookmarkLead = time.Second

// pollState is what a polled watcher keeps between Poll and NotifyOnce.
type pollState struct {
	// Owned by the polling goroutine. events and tick are the channels
	// taken by the last Poll, if it found nothing (nil otherwise);
	// finalAt is when the bookmark before the deadline is due (zero:
	// none).
	events, tick <-chan struct{}
	finalAt      time.Time

	// Guarded by Cache.wmu: where the watcher sits in the list of the
	// events channel and of the tick channel, if it is there (see
	// waiting).
	eventsIdx, tickIdx int32

	// wake is the first wake NotifyOnce was given. It is written once,
	// under Cache.wmu, before the watcher joins any list or arms final, so
	// whoever takes the watcher from a list, or the final timer, reads it
	// safely.
	wake func()
	// finalFired is set by the final timer and consumed by Poll.
	finalFired atomic.Bool
}

// Poll implements storage.Watcher.
func (w *watcher[O]) Poll(ctx context.Context, buf []storage.Event[O]) ([]storage.Event[O], error) {
	p := &w.poll
	p.events, p.tick = nil, nil
	if w.err != nil {
		return buf, w.err
	}
	// Take the channels before looking: a change after collect closes
	// them, and NotifyOnce sees that.
	events, tick := w.c.watchChans(w.m.ns, w.bookmarks)
	if w.bookmarks && p.finalAt.IsZero() {
		if deadline, ok := ctx.Deadline(); ok {
			p.finalAt = deadline.Add(-finalBookmarkLead)
		}
	}
	if p.finalFired.Swap(false) {
		w.finalDue = true
	}
	// Whether the cache has closed is read before looking too: ingest has
	// stopped by the time done closes, so a look after it sees every event
	// the cache will ever have. Read after the look, a close could hide an
	// event that came in between, and the watch would end without it.
	closed := isClosed(w.c.done)
	var found bool
	if buf, found = w.take(buf); found {
		return buf, nil
	}
	if w.err != nil {
		return buf, w.err
	}
	if closed {
		w.end(io.EOF)
		return buf, w.err
	}
	if err := ctx.Err(); err != nil {
		return buf, err
	}
	p.events, p.tick = events, tick
	return buf, nil
}

// NotifyOnce implements storage.Watcher. Unless the last Poll found
// nothing and nothing has happened since, it calls wake at once;
// otherwise the watcher joins the lists of the channels that Poll took (at
// most once each, however often NotifyOnce is called) and the final
// bookmark's timer is armed.
func (w *watcher[O]) NotifyOnce(wake func()) {
	p := &w.poll
	if p.events == nil || p.finalFired.Load() {
		wake()
		return
	}
	c := w.c
	c.wmu.Lock()
	if p.wake == nil {
		p.wake = wake
	}
	ready := isClosed(p.events) || isClosed(p.tick) || isClosed(c.done) || isClosed(w.done)
	if !ready {
		if w.m.ns == "" {
			addWaiterLocked(&c.pollAll, w, &p.eventsIdx)
		} else {
			ws := c.pollNS[w.m.ns]
			addWaiterLocked(&ws, w, &p.eventsIdx)
			c.pollNS[w.m.ns] = ws
		}
		if p.tick != nil {
			addWaiterLocked(&c.pollTick, w, &p.tickIdx)
		}
		if w.final == nil && !p.finalAt.IsZero() {
			w.final = time.AfterFunc(max(time.Until(p.finalAt), 0), w.finalFire)
		}
	}
	c.wmu.Unlock()
	if ready {
		wake()
	}
}

// finalFire runs on the final timer's goroutine: the bookmark before the
// deadline is due.
func (w *watcher[O]) finalFire() {
	w.poll.finalFired.Store(true)
	w.poll.wake()
}

// forgetPolledLocked takes a stopping watcher off the lists it waits in,
// so that a stopped watch is not kept until its channels next close.
// c.wmu must be held.
func (c *Cache[O]) forgetPolledLocked(w *watcher[O]) {
	p := &w.poll
	if w.m.ns == "" {
		removeWaiterLocked(&c.pollAll, w, eventsIdx[O])
	} else if ws := c.pollNS[w.m.ns]; waiting(ws, w, p.eventsIdx) {
		removeWaiterLocked(&ws, w, eventsIdx[O])
		if len(ws) == 0 {
			delete(c.pollNS, w.m.ns)
		} else {
			c.pollNS[w.m.ns] = ws
		}
	}
	removeWaiterLocked(&c.pollTick, w, tickIdx[O])
}

// waiting reports whether w is in ws, at idx, the index it recorded when
// it joined. A list is dropped whole when its channel closes, so an index
// from an older list finds another watcher or nothing.
func waiting[O resource.Object](ws []*watcher[O], w *watcher[O], idx int32) bool {
	return int(idx) < len(ws) && ws[idx] == w
}

// addWaiterLocked appends w to *ws unless it is there already, recording
// its index in *idx. The caller holds Cache.wmu.
func addWaiterLocked[O resource.Object](ws *[]*watcher[O], w *watcher[O], idx *int32) {
	if waiting(*ws, w, *idx) {
		return
	}
	*idx = int32(len(*ws))
	*ws = append(*ws, w)
}

// removeWaiterLocked removes w from *ws if it is there, moving the last
// watcher into its place; slot gives a watcher's index for this kind of
// list. The caller holds Cache.wmu.
func removeWaiterLocked[O resource.Object](ws *[]*watcher[O], w *watcher[O], slot func(*watcher[O]) *int32) {
	s := *ws
	i := *slot(w)
	if !waiting(s, w, i) {
		return
	}
	last := len(s) - 1
	s[i] = s[last]
	*slot(s[i]) = i
	s[last] = nil
	*ws = s[:last]
}

func eventsIdx[O resource.Object](w *watcher[O]) *int32 { return &w.poll.eventsIdx }
func tickIdx[O resource.Object](w *watcher[O]) *int32   { return &w.poll.tickIdx }

// isClosed reports whether ch is closed; a nil ch never is.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
