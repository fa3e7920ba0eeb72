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

// Decode decodes a stored value of the relative key at rev as every
// read does.
func (s *Store[O]) Decode(ctx context.Context, data []byte, rev int64, key string) (O, error) {
	return s.decode(ctx, data, rev, key)
}

// ToStorage returns the bytes a write stores for plaintext data.
func (s *Store[O]) ToStorage(ctx context.Context, key string, data []byte) ([]byte, error) {
	return s.toStorage(ctx, key, data)
}
