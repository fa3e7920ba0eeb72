package cache

import (
	"context"
	"errors"
	"time"

	"github.com/apiloom/apiloom/server/storage"
)

// errWaitTimeout: the cache did not reach a revision within waitTimeout.
var errWaitTimeout = errors.New("cache: revision not reached in time")

// progressRetry is how often the cache asks the source for progress while
// a reader waits: a progress notification arrives only once etcd has sent
// the watch everything up to its revision.
const progressRetry = 50 * time.Millisecond

// waitFor blocks until the cache has caught up with rev. It fails with
// errWaitTimeout after waitTimeout, ctx's error, or errClosed. While it
// waits, the cache asks etcd for progress, so that an idle resource
// reaches rev without waiting for a write.
func (c *Cache[O]) waitFor(ctx context.Context, rev int64) error {
	if c.rev.Load() >= rev {
		return nil
	}
	c.wantProgress(rev)
	t := time.NewTimer(c.cfg.waitTimeout)
	defer t.Stop()
	for {
		moved := c.revChan()
		if c.rev.Load() >= rev {
			return nil
		}
		select {
		case <-moved:
		case <-t.C:
			return errWaitTimeout
		case <-ctx.Done():
			return ctx.Err()
		case <-c.done:
			return errClosed
		}
	}
}

// waitConsistent blocks until the cache holds every write acknowledged
// before the call: it reads etcd's revision with a quorum and waits for it.
func (c *Cache[O]) waitConsistent(ctx context.Context) error {
	rev, err := c.src.CurrentRevision(ctx)
	if err != nil {
		return err
	}
	c.metrics.lag.Set(float64(max(0, rev-c.rev.Load())))
	return c.waitFor(ctx, rev)
}

// reach waits until the cache has caught up with rev, a revision a client
// named. A revision etcd has not reached yet fails at once with
// ErrTooLargeResourceVersion, as the store fails it; one etcd has reached
// fails with errWaitTimeout if the cache does not get there in time.
func (c *Cache[O]) reach(ctx context.Context, rev int64) error {
	if c.rev.Load() >= rev {
		return nil
	}
	cur, err := c.src.CurrentRevision(ctx)
	if err != nil {
		return err
	}
	if rev > cur {
		return &storage.Error{Err: storage.ErrTooLargeResourceVersion, ResourceVersion: rev, CurrentRevision: cur}
	}
	c.metrics.lag.Set(float64(max(0, cur-c.rev.Load())))
	return c.waitFor(ctx, rev)
}

// wantProgress asks the progress goroutine to get the cache to rev.
func (c *Cache[O]) wantProgress(rev int64) {
	for {
		cur := c.want.Load()
		if rev <= cur || c.want.CompareAndSwap(cur, rev) {
			break
		}
	}
	c.wantUntil.Store(time.Now().Add(c.cfg.waitTimeout).UnixNano())
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// requestProgress is the goroutine that asks the source for progress
// notifications on behalf of waiting readers: when a reader starts waiting,
// and every progressRetry while any still waits (etcd answers only once
// it has sent the watch everything up to its revision).
func (c *Cache[O]) requestProgress(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.kick:
		}
		for c.rev.Load() < c.want.Load() && time.Now().UnixNano() < c.wantUntil.Load() {
			if err := c.src.RequestProgress(ctx); err != nil && ctx.Err() == nil {
				c.cfg.log.Debug("watch cache: progress request failed", "resource", c.def.GroupResource().String(), "err", err)
			}
			t := time.NewTimer(progressRetry)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-c.kick: // a new reader: ask again now
			case <-t.C:
			}
			t.Stop()
		}
	}
}
