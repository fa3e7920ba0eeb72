package cache

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/wire"
)

const (
	// Backoff between failed attempts to list or watch the source.
	minBackoff = 100 * time.Millisecond
	maxBackoff = 5 * time.Second
)

// ingest is the cache's one writer. It lists the source, then follows one
// source watch from the list's revision, applying each event. When the
// watch breaks it watches again from the cache's revision, so nothing is
// lost; when that revision is gone from etcd (ErrExpired), it lists again.
func (c *Cache[O]) ingest(ctx context.Context) {
	backoff := minBackoff
	listed := false
	for ctx.Err() == nil {
		var err error
		if !listed {
			if err = c.relist(ctx); err == nil {
				listed = true
				backoff = minBackoff
			}
		} else {
			var progressed bool
			progressed, err = c.follow(ctx)
			if progressed {
				backoff = minBackoff
			}
			if errors.Is(err, storage.ErrExpired) {
				listed = false
			}
		}
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			continue // listed: watch at once
		}
		c.cfg.log.Warn("watch cache: source failed; retrying", "resource", c.def.GroupResource().String(),
			"revision", c.rev.Load(), "relist", !listed, "backoff", backoff, "err", err)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// relist reads the whole resource from the source at one revision and
// makes it the cache's state. The history restarts at that revision: a
// watcher that had not reached it may have missed events and ends with
// ErrExpired when it next reads. Values that do not decode are left out
// of the state and remembered as corrupt (the source lists and logs them).
func (c *Cache[O]) relist(ctx context.Context) error {
	next := newTree[O]()
	corrupt := make(map[string]*storage.Error)
	var rev int64
	listCtx, stopListing := context.WithCancel(ctx)
	defer stopListing()
	p := listPages(listCtx, c.src.GetList, c.cfg.listPageSize)
	var buildErr error
	for list := range p.ch {
		if buildErr != nil {
			continue // draining: the lister has been told to stop
		}
		rev = list.ResourceVersion
		items, err := c.buildItems(list.Items, c.cfg.relistWorkers)
		if err != nil {
			buildErr = err
			stopListing()
			continue
		}
		for _, it := range items {
			next.ReplaceOrInsert(it)
		}
		for _, se := range list.Corrupt {
			corrupt[se.Key] = se
		}
	}
	if buildErr != nil {
		return buildErr
	}
	if p.err != nil {
		return p.err
	}

	perNS := make(map[string]int64)
	next.Ascend(func(it *item[O]) bool {
		if _, seen := perNS[it.ns]; !seen {
			// A key of its own: it.ns points into the item's frame, which
			// the map would otherwise keep after the item is gone.
			perNS[strings.Clone(it.ns)] = 0
		}
		perNS[it.ns]++
		return true
	})
	c.mu.Lock()
	first := !c.Ready()
	c.tree, c.perNS = next, perNS
	c.corrupt = corrupt
	c.rev.Store(rev)
	if !first {
		c.gen++
		c.metrics.relists.Inc()
	}
	c.hist.reset(rev)
	c.changes++
	c.mu.Unlock()
	c.metrics.corrupt.Set(float64(len(corrupt)))

	if first {
		close(c.ready)
	}
	c.wakeEveryone()
	return nil
}

// countOut counts one item of namespace ns out of the tree. c.mu must be
// held for writing.
func (c *Cache[O]) countOut(ns string) {
	if c.perNS[ns]--; c.perNS[ns] <= 0 {
		delete(c.perNS, ns)
	}
}

// follow watches the source from the cache's revision and applies what it
// sends until the watch fails. It reports whether it applied anything.
func (c *Cache[O]) follow(ctx context.Context) (progressed bool, err error) {
	w, err := c.src.Watch(ctx, storage.ListOptions{
		ResourceVersion: storage.FormatResourceVersion(c.rev.Load()),
		AllowBookmarks:  true,
	})
	if err != nil {
		return false, fmt.Errorf("watch: %w", err)
	}
	events := storage.NewBlocking(w)
	defer events.Stop()
	var buf []storage.Event[O]
	for {
		buf, err = events.Next(ctx, buf[:0])
		if len(buf) > 0 {
			if aerr := c.apply(buf); aerr != nil {
				return progressed, aerr
			}
			progressed = true
			clear(buf) // let the objects go with the history
		}
		if err != nil {
			return progressed, fmt.Errorf("watch: %w", err)
		}
	}
}

// apply adds a batch of source events to the state and history and wakes
// the watchers they concern. Encoding happens outside mu, so readers wait
// only for the few pointer updates.
//
// An event with Corrupt set (a PUT of a value that does not decode) takes
// the key out of the state and records it as corrupt; any other event for
// the key makes it readable again or deletes it.
func (c *Cache[O]) apply(events []storage.Event[O]) error {
	var touched []string // namespaces with events, for the wake-up
	moved, anyEvent := false, false
	corruptBefore := len(c.corrupt)
	for _, se := range events {
		rev, err := storage.ParseResourceVersion(se.Object.GetResourceVersion())
		if err != nil {
			return fmt.Errorf("source event: %w", err)
		}
		if rev <= c.rev.Load() {
			continue // nothing new; the source never repeats, but be safe
		}
		if se.Type == watch.Bookmark {
			c.mu.Lock()
			c.rev.Store(rev)
			c.mu.Unlock()
			moved = true
			continue
		}
		e, err := c.newEvent(se, rev)
		if err != nil {
			return err
		}
		c.mu.Lock()
		switch {
		case e.cur != nil:
			if _, replaced := c.tree.ReplaceOrInsert(e.cur); !replaced {
				c.perNS[e.ns]++
			}
		case e.prev != nil:
			if _, deleted := c.tree.Delete(e.prev); deleted {
				c.countOut(e.ns)
			}
		}
		if se.Corrupt != nil {
			c.corrupt[e.key] = se.Corrupt
		} else {
			delete(c.corrupt, e.key)
		}
		c.hist.append(e)
		c.rev.Store(rev)
		c.changes++
		c.mu.Unlock()
		moved, anyEvent = true, true
		if len(touched) == 0 || touched[len(touched)-1] != e.ns {
			touched = append(touched, e.ns)
		}
	}
	if n := len(c.corrupt); n != corruptBefore {
		c.metrics.corrupt.Set(float64(n))
	}
	if moved {
		c.wake(touched, anyEvent)
	}
	return nil
}

// newEvent turns a source event at rev into a history event, encoding it.
// Only the ingest goroutine calls it: it reads the tree without mu.
//
// The event is what the change means for the cache's state: a MODIFIED of
// an object the state does not hold (its value was unreadable) is an
// ADDED; a DELETED of one has no previous item (the source built it from
// the key), so lists at older revisions undo it to nothing and watchers
// match it by key.
func (c *Cache[O]) newEvent(se storage.Event[O], rev int64) (*event[O], error) {
	key := c.keyOf(se.Object)
	e := &event[O]{typ: se.Type, rev: rev, key: key, ns: c.nsOf(se.Object), corrupt: se.Corrupt}
	prev, held := c.tree.Get(&item[O]{key: key})
	if held {
		e.prev = prev
	}
	switch se.Type {
	case watch.Added, watch.Modified:
		if !held {
			e.typ = watch.Added
		}
		cur, err := c.newItem(se.Object, e.typ, true)
		if err != nil {
			return nil, err
		}
		e.cur, e.src = cur, cur
	case watch.Deleted:
		del, err := c.newItem(se.Object, watch.Deleted, true)
		if err != nil {
			return nil, err
		}
		e.src = del
	default:
		return nil, fmt.Errorf("source event: unexpected type %q", se.Type)
	}
	// The item (made pinned) holds its decoded object and its encodings
	// besides JSON while the event is in the window (altEncodings), until
	// leftWindow.
	return e, nil
}

// newItem encodes obj, which the cache now owns, as a frame of type typ.
// A pinned item (one an event in the window carries) holds its decoded
// object; any other lets it go (item.object).
func (c *Cache[O]) newItem(obj O, typ watch.EventType, pinned bool) (*item[O], error) {
	obj.GetObjectKind().SetGroupVersionKind(c.gvk)
	raw, err := encodeObject(obj)
	if err != nil {
		return nil, fmt.Errorf("cache: encode %s %s: %w", c.gvk.Kind, c.keyOf(obj), err)
	}
	it := &item[O]{frameType: typ, newObj: c.def.New}
	it.frame, it.raw = newFrame(typ, raw)
	// The object is decoded again from the frame, its strings pointing
	// into it: a frame never changes and lives as long as its item, so the
	// labels kept for selectors cost nothing more, and neither does the
	// object while someone holds it. A DELETED item lives in the history
	// only and keeps the copy, as does one whose JSON does not alias.
	it.kept = true
	if typ != watch.Deleted {
		if aliased := c.def.New(); wire.DecodeAliasing(it.raw, aliased) {
			obj, it.kept = aliased, false
		}
	}
	it.key, it.ns = c.keyOf(obj), c.nsOf(obj)
	it.labels, it.fields = obj.GetLabels(), compactFields(c.def.Fields(obj))
	it.pinned.Store(pinned)
	if pinned || it.kept {
		it.hold(obj)
	}
	return it, nil
}

func (c *Cache[O]) nsOf(obj O) string {
	if !c.def.Namespaced {
		return ""
	}
	return obj.GetNamespace()
}

func (c *Cache[O]) keyOf(obj O) string { return storage.Key(c.nsOf(obj), obj.GetName()) }
