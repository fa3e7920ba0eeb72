package cache

// Wake-ups are broadcast channels: a waiter takes the current channel under
// wmu before it looks at the state, and the ingest goroutine closes (and
// replaces) it after changing the state, so a change is never missed
// between looking and waiting. Watchers of one namespace wait on that
// namespace's channel, so a write in one namespace does not wake every
// namespaced watcher.

// wake wakes everyone waiting for a revision and, if there were events,
// the watchers of their namespaces and of all namespaces.
func (c *Cache[O]) wake(namespaces []string, events bool) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if events {
		for _, ns := range namespaces {
			c.wakeNamespaceLocked(ns)
		}
		c.wakeAll = renew(c.wakeAll)
	}
	c.revUp = renew(c.revUp)
}

// wakeEveryone wakes every waiter: after a relist, all of them must look.
func (c *Cache[O]) wakeEveryone() {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	for ns := range c.wakeNS {
		c.wakeNamespaceLocked(ns)
	}
	c.wakeAll = renew(c.wakeAll)
	c.revUp = renew(c.revUp)
}

// wakeNamespaceLocked wakes the watchers of namespace ns; the next ones get
// a fresh channel from watchChans. c.wmu must be held.
func (c *Cache[O]) wakeNamespaceLocked(ns string) {
	if ch, ok := c.wakeNS[ns]; ok {
		close(ch)
		delete(c.wakeNS, ns)
	}
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
	defer c.wmu.Unlock()
	c.tickCh = renew(c.tickCh)
}
