package cache

import (
	"io"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/server/internal/failpoint"
	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
)

// watcher is one watch on the cache: a cursor into the history and a
// filter. It owns no goroutine and no queue; whoever drives it moves the
// cursor in Poll (poll.go).
type watcher[O resource.Object] struct {
	// Immutable after Watch.
	c         *Cache[O]
	m         matcher
	bookmarks bool
	// objects: events carry decoded objects (not storage.ListOptions.Encoded).
	objects bool
	// watchList: the watch asked for initial events (sendInitialEvents=true),
	// as informers' watch-list requests do. Read only by planted bugs.
	watchList bool
	done      chan struct{} // closed by Stop
	stopOnce  sync.Once

	// Owned by the goroutine that calls Poll.
	seq      uint64 // the next history event to look at
	gen      uint64 // the cache generation seq belongs to
	progress int64  // every event up to progress has been looked at
	sent     int64  // the revision the client last heard of
	ticks    uint64 // the bookmark tick last served
	// final fires shortly before the request's deadline so that the client
	// hears the newest revision before the stream ends; finalDue asks the
	// next collect for that bookmark. final is set once, under c.wmu, by
	// NotifyOnce; Stop stops it under c.wmu.
	final    *time.Timer
	finalDue bool
	// init is the start state still to send (initial.go), then, if
	// endPending, the BOOKMARK at endRev that ends it.
	init       initialState
	endPending bool
	endRev     int64
	err        error // the error that ended the watch; sticky

	poll pollState // what Poll and NotifyOnce keep between calls

	// forgotten is the key whose events the planted bug informerDropDelete
	// keeps from this watcher (planted.go); "" in every normal run. Owned
	// by the goroutine that calls Poll.
	forgotten string
}

func (c *Cache[O]) newWatcher(m matcher, bookmarks bool) *watcher[O] {
	c.metrics.watchers.Inc()
	return &watcher[O]{c: c, m: m, bookmarks: bookmarks, done: make(chan struct{}), ticks: c.ticks.Load()}
}

// Stop implements storage.Watcher. It may be called from any goroutine;
// a reader waiting after NotifyOnce is woken, and the next Poll returns
// io.EOF.
func (w *watcher[O]) Stop() {
	w.stopOnce.Do(func() {
		close(w.done)
		w.c.wmu.Lock()
		if w.final != nil {
			w.final.Stop()
		}
		w.c.forgetPolledLocked(w)
		wake := w.poll.wake
		w.c.wmu.Unlock()
		w.c.metrics.watchers.Dec()
		if wake != nil {
			wake() // whoever waits for the watcher sees it end
		}
	})
}

// end records why the watch ended and lets go of what it held.
func (w *watcher[O]) end(err error) {
	w.err = err
	w.init = initialState{}
	w.endPending = false
}

// take appends what collect has for the watcher, counting it as
// dispatched, and reports whether there was anything.
func (w *watcher[O]) take(buf []storage.Event[O]) ([]storage.Event[O], bool) {
	n := len(buf)
	buf = w.collect(buf)
	if len(buf) == n {
		return buf, false
	}
	w.c.metrics.dispatched.Add(float64(len(buf) - n))
	return buf, true
}

// collect appends to buf what the watcher has to send now: initial events,
// then history events past its cursor that pass its filter, then a
// bookmark if a tick passed and the client is behind the revision.
func (w *watcher[O]) collect(buf []storage.Event[O]) []storage.Event[O] {
	select {
	case <-w.done:
		w.end(io.EOF)
		return buf
	default:
	}
	budget := w.c.cfg.maxBatch
	if w.init.active {
		if buf, budget = w.collectInitial(buf, budget); w.init.active || w.err != nil {
			return buf
		}
	}
	if w.endPending {
		buf = append(buf, w.c.bookmarkAt(w.endRev, true))
		w.endPending = false
		budget--
	}

	c := w.c
	c.mu.RLock()
	defer c.mu.RUnlock()
	h := c.hist
	if w.gen != c.gen || w.seq < h.first {
		// Events the cursor needed left the window, or a relist replaced
		// it. Resume only if none of them was still due.
		if w.progress < h.start {
			c.metrics.expired.Inc()
			w.end(&storage.Error{Err: storage.ErrExpired, ResourceVersion: w.progress, CurrentRevision: h.start,
				Detail: "the watcher fell behind the watch cache's window"})
			return buf
		}
		w.gen, w.seq = c.gen, h.seqAfter(w.progress)
	}
	for ; w.seq < h.next && budget > 0; w.seq++ {
		e := h.at(w.seq)
		if e.rev <= w.progress {
			continue
		}
		w.progress = e.rev
		if ev, ok := w.translate(e); ok {
			if failpoint.Enabled && failpoint.Fire(failpoint.WatchDropEvent) {
				failpoint.Logf(failpoint.WatchDropEvent, "%s %s %s at revision %d not sent to a watcher of namespace %q",
					c.def.GroupResource(), ev.Type, e.key, e.rev, w.m.ns)
				continue
			}
			if failpoint.Enabled && (e.key == w.forgotten || ev.Type == watch.Deleted && w.watchList && failpoint.Fire(failpoint.InformerDropDelete)) {
				w.forget(e)
				continue
			}
			buf = append(buf, ev)
			w.sent = e.rev
			budget--
		}
	}
	if w.seq < h.next {
		return buf
	}
	// Caught up: nothing in the window is due up to the cache's revision.
	w.progress = max(w.progress, c.rev.Load())
	if w.bookmarks {
		if t := c.ticks.Load(); t != w.ticks || w.finalDue {
			w.ticks, w.finalDue = t, false
			if w.progress > w.sent {
				buf = append(buf, c.bookmarkAt(w.progress, false))
				w.sent = w.progress
			}
		}
	}
	return buf
}

// translate returns e as this watcher sees it, if at all. A MODIFIED that
// takes the object into the watcher's selector is an ADDED, one that takes
// it out a DELETED, as the store does; all variants are shared encodings.
func (w *watcher[O]) translate(e *event[O]) (storage.Event[O], bool) {
	if w.m.ns != "" && e.ns != w.m.ns {
		return storage.Event[O]{}, false
	}
	if !w.m.selective() {
		return e.primary(w.objects), true
	}
	switch e.typ {
	case watch.Added:
		if matches(&w.m, e.cur) {
			return e.primary(w.objects), true
		}
	case watch.Deleted:
		if e.prev == nil {
			// Built from the key of a value that does not decode: only the
			// namespace and name are known.
			p := storage.Predicate{Label: w.m.label, Field: w.m.field}
			if obj := e.src.object(); p.MayMatchKey(obj.GetNamespace(), obj.GetName()) {
				return e.primary(w.objects), true
			}
		} else if matches(&w.m, e.prev) {
			return e.primary(w.objects), true
		}
	case watch.Modified:
		now := matches(&w.m, e.cur)
		before := e.prev != nil && matches(&w.m, e.prev)
		switch {
		case now && before:
			return e.primary(w.objects), true
		case now:
			return e.entering(w.objects), true
		case before:
			return e.leaving(), true
		}
	}
	return storage.Event[O]{}, false
}
