package storage

import (
	"context"

	"github.com/apiloom/apiloom/server/resource"
)

// Blocking drives a Watcher from a goroutine that waits for its events:
// the HTTP/1.1 and WebSocket watch handlers, and the watch cache following
// its store. It is the one adapter between the polled watcher and a
// blocking reader; it owns the wake it gives NotifyOnce. It is used by one
// goroutine, except Stop.
type Blocking[O resource.Object] struct {
	w     Watcher[O]
	ready chan struct{} // one pending wake-up at most
	wake  func()
}

// NewBlocking returns the blocking reader of w, which it drives from now
// on: w must not be polled by anyone else.
func NewBlocking[O resource.Object](w Watcher[O]) *Blocking[O] {
	b := &Blocking[O]{w: w, ready: make(chan struct{}, 1)}
	b.wake = func() { signal(b.ready) }
	return b
}

// Next blocks until the watcher has events, or ends, and appends them to
// buf; its errors are Poll's, and ctx.Err() when ctx ends first.
func (b *Blocking[O]) Next(ctx context.Context, buf []Event[O]) ([]Event[O], error) {
	n := len(buf)
	for {
		var err error
		if buf, err = b.w.Poll(ctx, buf); len(buf) > n || err != nil {
			return buf, err
		}
		b.w.NotifyOnce(b.wake)
		select {
		case <-b.ready:
		case <-ctx.Done():
			return buf, ctx.Err()
		}
	}
}

// Stop stops the watcher; a Next blocked meanwhile returns io.EOF.
func (b *Blocking[O]) Stop() { b.w.Stop() }
