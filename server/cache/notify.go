package cache

import "github.com/apiloom/apiloom/server/resource"

// Wake-ups are channels closed and replaced at each change: a watcher
// takes the current channel under wmu before it looks at the state (Poll),
// and the ingest goroutine closes it after changing the state, so a change
// is never missed between looking and waiting. Watchers of one namespace
// take that namespace's channel, so a write in one namespace does not wake
// every namespaced watcher. A watcher that found nothing (NotifyOnce)
// waits in the list kept beside the channel it took (pollAll, pollNS,
// pollTick): whoever closes a channel takes its list under wmu as well,
// and calls the watchers' wakes once wmu is released. A wake never runs under mu or wmu: it belongs to the transport
// and may take the transport's own locks.

// wake wakes everyone waiting for a revision and, if there were events,
// the watchers of their namespaces and of all namespaces.
func (c *Cache[O]) wake(namespaces []string, events bool) {
	var buf [4][]*watcher[O]
	woken := buf[:0]
	c.wmu.Lock()
	if events {
		for _, ns := range namespaces {
			woken = c.wakeNamespaceLocked(ns, woken)
		}
		c.wakeAll = renew(c.wakeAll)
		woken = takeWaiters(woken, &c.pollAll)
	}
	c.revUp = renew(c.revUp)
	c.wmu.Unlock()
	wakePolled(woken)
}

// wakeEveryone wakes every waiter: after a relist, all of them must look.
func (c *Cache[O]) wakeEveryone() {
	var woken [][]*watcher[O]
	c.wmu.Lock()
	for ns := range c.wakeNS {
		woken = c.wakeNamespaceLocked(ns, woken)
	}
	c.wakeAll = renew(c.wakeAll)
	woken = takeWaiters(woken, &c.pollAll)
	c.revUp = renew(c.revUp)
	c.wmu.Unlock()
	wakePolled(woken)
}

// wakeNamespaceLocked wakes the watchers of namespace ns; the next ones get
// a fresh channel from watchChans. It appends the polled watchers waiting
// for ns to woken, for the caller to wake once wmu is released. c.wmu must
// be held.
func (c *Cache[O]) wakeNamespaceLocked(ns string, woken [][]*watcher[O]) [][]*watcher[O] {
	if ch, ok := c.wakeNS[ns]; ok {
		close(ch)
		delete(c.wakeNS, ns)
	}
	if ws := c.pollNS[ns]; len(ws) > 0 {
		woken = append(woken, ws)
		delete(c.pollNS, ns)
	}
	return woken
}

// renew closes ch, waking everyone waiting on it, and returns the channel
// the next waiters wait on.
func renew(ch chan struct{}) chan struct{} {
	close(ch)
	return make(chan struct{})
}

// watchChans returns the channel closed at the next event that may
// concern a watcher of ns ("" = every namespace) and, if bookmarks, the one
// closed at the next bookmark tick (nil otherwise: never ready).
func (c *Cache[O]) watchChans(ns string, bookmarks bool) (events, tick <-chan struct{}) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if bookmarks {
		tick = c.tickCh
	}
	if ns == "" {
		return c.wakeAll, tick
	}
	ch, ok := c.wakeNS[ns]
	if !ok {
		ch = make(chan struct{})
		c.wakeNS[ns] = ch
	}
	return ch, tick
}

// revChan returns the channel that is closed when the revision next moves.
func (c *Cache[O]) revChan() <-chan struct{} {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.revUp
}

// tick starts a bookmark period: watchers that allow bookmarks and are
// behind the revision get one at their next read.
func (c *Cache[O]) tick() {
	c.ticks.Add(1)
	c.wmu.Lock()
	c.tickCh = renew(c.tickCh)
	woken := c.pollTick
	c.pollTick = nil
	c.wmu.Unlock()
	for _, w := range woken {
		w.poll.wake()
	}
}

// wakeAllPolledLocked empties every list of polled watchers into woken:
// the cache is closing. c.wmu must be held.
func (c *Cache[O]) wakeAllPolledLocked(woken [][]*watcher[O]) [][]*watcher[O] {
	for ns, ws := range c.pollNS {
		woken = append(woken, ws)
		delete(c.pollNS, ns)
	}
	woken = takeWaiters(woken, &c.pollAll)
	return takeWaiters(woken, &c.pollTick)
}

// takeWaiters moves the polled watchers of *list to woken. The caller
// holds c.wmu.
func takeWaiters[O resource.Object](woken [][]*watcher[O], list *[]*watcher[O]) [][]*watcher[O] {
	if n := len(*list); n > 0 {
		woken = append(woken, *list)
		// The same watchers mostly wait again after this event: room for
		// them in one allocation, not a slice regrown from nothing.
		*list = make([]*watcher[O], 0, n)
	}
	return woken
}

// wakePolled calls the wake of every watcher in woken. c.wmu must not be
// held.
func wakePolled[O resource.Object](woken [][]*watcher[O]) {
	for _, ws := range woken {
		for _, w := range ws {
			w.poll.wake()
		}
	}
}
