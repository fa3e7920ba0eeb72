package cache

import (
	"github.com/apiloom/apiloom/server/storage"
)

// A watch that starts with the current state (RV "" or "0", or watch-list)
// owes its client an ADDED per matching object as of its start revision.
// The watcher does not hold that state: no snapshot, no list of items. It
// holds a key cursor and rebuilds each batch from the live tree, undoing
// the history's events after the start revision for the keys it reads
// (the view of state.go, narrowed to the keys still owed). A client that
// stops reading therefore pins nothing but its cursor, however many
// objects there are and however much they change meanwhile; before this,
// each such watcher kept a slice of every item, and with them every
// version the writers had since replaced. The price is that the start
// revision must stay inside the history window until the last initial
// event is sent: a watcher that takes longer than the window lasts ends
// with ErrExpired and relists, as any watcher that falls that far behind.

// maxInitialScan bounds how many items one pass over the tree visits, so
// that a selective watcher that matches few of many objects holds the
// cache's read lock only briefly at a time.
const maxInitialScan = 1024

// initialState is the part of the start state a watcher still owes. The
// goroutine that drives the watcher owns it.
type initialState struct {
	active bool
	// rng is the watched key range (one namespace, or everything) and
	// after the last key read in it; started is false until the first.
	rng     keyRange
	after   string
	started bool
}

// startInitial makes the watcher owe the state at its start revision,
// w.progress, whose next history event is w.seq in generation w.gen.
func (w *watcher[O]) startInitial() {
	w.init = initialState{active: true, rng: namespaceRange(w.m.ns)}
}

// collectInitial appends to buf, up to budget events, the ADDED events of
// the objects still owed, and returns the budget left. When the start
// revision has left the window, or a relist replaced the history, the
// watch ends with ErrExpired.
func (w *watcher[O]) collectInitial(buf []storage.Event[O], budget int) ([]storage.Event[O], int) {
	for w.init.active && budget > 0 && w.err == nil {
		buf, budget = w.scanInitial(buf, budget)
	}
	return buf, budget
}

// scanInitial is one pass of collectInitial under the read lock: at most
// maxInitialScan items visited.
func (w *watcher[O]) scanInitial(buf []storage.Event[O], budget int) ([]storage.Event[O], int) {
	c := w.c
	c.mu.RLock()
	defer c.mu.RUnlock()
	h := c.hist
	if w.gen != c.gen || w.seq < h.first {
		c.metrics.expired.Inc()
		w.end(&storage.Error{Err: storage.ErrExpired, ResourceVersion: w.progress, CurrentRevision: h.start,
			Detail: "the watcher fell behind the watch cache's window while sending its initial events"})
		return buf, budget
	}
	from := w.init.rng.from
	if w.init.started {
		from = w.init.after + "\x00"
	}
	rest := keyRange{from: from, to: w.init.rng.to}

	// The tree is at the cache's revision; undo, for the keys still owed,
	// what changed since the start revision.
	v := view[O]{tree: c.tree, rev: w.progress}
	var changed []*event[O]
	for seq := w.seq; seq < h.next; seq++ {
		if e := h.at(seq); rest.contains(e.key) {
			changed = append(changed, e)
		}
	}
	v.undoEvents(changed)

	visited, more := 0, false
	v.ascend(rest, func(it *item[O]) bool {
		if budget == 0 || visited == maxInitialScan {
			more = true
			return false
		}
		visited++
		w.init.after, w.init.started = it.key, true
		if matches(&w.m, it) {
			buf = append(buf, it.addedEvent(w.objects))
			budget--
		}
		return true
	})
	w.init.active = more
	return buf, budget
}
