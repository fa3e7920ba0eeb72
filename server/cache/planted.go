package cache

import (
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/server/internal/failpoint"
	"github.com/apiloom/apiloom/server/storage"
)

// The watch cache's planted bugs (package failpoint). Their sites call
// these only inside `if failpoint.Enabled && ...`, so a normal build
// compiles the calls away and the linker drops the functions.

// staleListBack is how many changes a stale consistent list goes back: far
// enough that the writes it misses were acknowledged well before the list
// was called (the suite's writers make a change every few milliseconds),
// so read-your-writes is broken for certain, not only for a write racing
// the list.
const staleListBack = 50

// staleView returns the state before the resource's last staleListBack
// changes (or before the oldest the history holds), instead of cur, the
// consistent state a list is due.
func (c *Cache[O]) staleView(cur view[O]) view[O] {
	c.mu.RLock()
	h := c.hist
	if h.len() == 0 {
		c.mu.RUnlock()
		return cur
	}
	seq := h.first
	if h.len() > staleListBack {
		seq = h.next - staleListBack
	}
	rev := h.at(seq).rev - 1
	c.mu.RUnlock()
	v, ok := c.viewAt(rev, cur.ns)
	if !ok {
		return cur
	}
	failpoint.Logf(failpoint.StaleConsistentList, "%s consistent list at revision %d answered from revision %d",
		c.def.GroupResource(), cur.rev, v.rev)
	return v
}

// dropItem leaves the middle item out of l, a consistent list (of Items
// and of Raw, which the handler writes when it is set).
func (c *Cache[O]) dropItem(l *storage.List[O]) *storage.List[O] {
	src := l.Encodings.(listEncodings[O]) // page's
	i := len(src) / 2
	it := src[i].object()
	failpoint.Logf(failpoint.ListDropItem, "%s consistent list at revision %d left out %s/%s (rv %s) of %d items",
		c.def.GroupResource(), l.ResourceVersion, it.GetNamespace(), it.GetName(), it.GetResourceVersion(), len(src))
	out := *l
	if l.Items != nil {
		out.Items = append(append(make([]O, 0, len(l.Items)-1), l.Items[:i]...), l.Items[i+1:]...)
	}
	// The encodings the handler writes, in the order of Items.
	out.Raw = append(append(make([][]byte, 0, len(l.Raw)-1), l.Raw[:i]...), l.Raw[i+1:]...)
	out.Encodings = append(append(make(listEncodings[O], 0, len(src)-1), src[:i]...), src[i+1:]...)
	return &out
}

// forget is informerDropDelete's bug: w drops e, and every later event of
// e's key. The first drop is logged.
func (w *watcher[O]) forget(e *event[O]) {
	if w.forgotten == e.key {
		return
	}
	w.forgotten = e.key
	failpoint.Logf(failpoint.InformerDropDelete, "%s %s %s at revision %d not sent to a watch-list watcher of namespace %q, nor any later event of that key",
		w.c.def.GroupResource(), watch.Deleted, e.key, e.rev, w.m.ns)
}
