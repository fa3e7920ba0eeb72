package cache

import (
	"context"
	"errors"

	"github.com/apiloom/apiloom/server/storage"
)

// Watch implements storage.Interface from the cache's history, with the
// store's semantics:
//
//   - SendInitialEvents unset and RV "" or "0", or SendInitialEvents=true:
//     an ADDED per matching object at a snapshot S, then (watch-list with
//     AllowBookmarks) a BOOKMARK at S annotated k8s.io/initial-events-end,
//     then every change after S. S is consistent for RV "" (at or after
//     etcd's revision when the call began), the cache's state for "0", and
//     at least N for RV N (ErrTooLargeResourceVersion if the cache does not
//     reach N in time; never ErrExpired).
//   - SendInitialEvents=false and RV "" or "0": every change after the
//     current revision (consistent for "").
//   - RV N otherwise: every change after N. If N is older than the window,
//     Next returns ErrExpired.
//
// With AllowBookmarks the watcher gets a BOOKMARK at the cache's revision
// every bookmark interval in which the revision moved past what it last
// heard. Until the cache is ready, and when a consistent start cannot be
// had from memory in time, the watch goes to the source.
func (c *Cache[O]) Watch(ctx context.Context, opts storage.ListOptions) (storage.Watcher[O], error) {
	if !c.Ready() || !plainNamespace(opts.Namespace) {
		return c.src.Watch(ctx, opts)
	}
	rv, err := storage.ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return nil, err
	}
	sendInitial := rv == 0
	if opts.SendInitialEvents != nil {
		sendInitial = *opts.SendInitialEvents
	}
	consistent := opts.ResourceVersion == ""

	switch {
	case sendInitial || rv == 0:
		if consistent {
			if err := c.waitConsistent(ctx); errors.Is(err, errWaitTimeout) {
				return c.src.Watch(ctx, opts)
			} else if err != nil {
				return nil, err
			}
		} else if err := c.reach(ctx, rv); err != nil {
			return nil, c.waitError(err, rv)
		}
		w := c.newWatcher(c.matcherFor(opts), opts.AllowBookmarks)
		w.objects = !opts.Encoded
		rev, seq, gen := c.head()
		w.seq, w.gen, w.progress, w.sent = seq, gen, rev, rev
		if sendInitial {
			w.watchList = opts.SendInitialEvents != nil
			w.startInitial()
			w.endPending = opts.SendInitialEvents != nil && opts.AllowBookmarks
			w.endRev = rev
		}
		return w, nil
	default:
		w := c.newWatcher(c.matcherFor(opts), opts.AllowBookmarks)
		w.objects = !opts.Encoded
		c.mu.RLock()
		defer c.mu.RUnlock()
		if rv < c.hist.start {
			w.end(&storage.Error{Err: storage.ErrExpired, ResourceVersion: rv, CurrentRevision: c.hist.start,
				Detail: "too old resource version"})
			return w, nil
		}
		w.seq, w.gen, w.progress, w.sent = c.hist.seqAfter(rv), c.gen, rv, rv
		return w, nil
	}
}

// matcherFor is the filter opts ask for.
func (c *Cache[O]) matcherFor(opts storage.ListOptions) matcher {
	ns := ""
	if c.def.Namespaced {
		ns = opts.Namespace
	}
	return newMatcher(ns, opts.Predicate.Label, opts.Predicate.Field)
}

// waitError is what a read that waited for rev in vain returns.
func (c *Cache[O]) waitError(err error, rev int64) error {
	if errors.Is(err, errWaitTimeout) {
		return &storage.Error{Err: storage.ErrTooLargeResourceVersion, ResourceVersion: rev, CurrentRevision: c.rev.Load()}
	}
	return err
}

// plainNamespace reports whether ns can be served from memory: "" or one
// key segment. Anything else goes to the source, which rejects it.
func plainNamespace(ns string) bool {
	if ns == "" {
		return true
	}
	if ns == "." || ns == ".." {
		return false
	}
	for i := 0; i < len(ns); i++ {
		if ns[i] == '/' || ns[i] == 0 {
			return false
		}
	}
	return true
}
