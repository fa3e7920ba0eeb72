package storage

import (
	"context"
	"time"

	"github.com/apiloom/apiloom/server/resource"
)

// WithSyncPageSize lets tests make a watch's initial read span pages.
var WithSyncPageSize = withSyncPageSize

// WatcherDone is closed when w's goroutine has exited.
func WatcherDone[O resource.Object](w Watcher[O]) <-chan struct{} {
	return w.(*watcher[O]).done
}

// Step runs one compaction tick now.
func (c *Compactor) Step(ctx context.Context) (int64, error) { return c.step(ctx) }

// WithCompactTicks replaces the compactor's timer with ticks.
func WithCompactTicks(ticks <-chan time.Time) CompactorOption {
	return func(c *Compactor) {
		c.after = func(time.Duration) <-chan time.Time { return ticks }
	}
}

// WithClock sets the clock lease reuse is measured with.
var WithClock = withClock
