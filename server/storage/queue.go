package storage

import (
	"context"
	"sync"

	"github.com/apiloom/apiloom/server/resource"
)

// eventQueue carries one watch's events from its producer goroutine to its
// single consumer. It is bounded: the producer either waits for room
// (push: the initial events, read from etcd at the producer's pace) or
// learns that the consumer fell behind (tryPush: live events, which etcd
// delivers at its pace and which must never be dropped), and then ends the
// watch.
type eventQueue[O resource.Object] struct {
	limit int // immutable

	mu     sync.Mutex
	events []Event[O] // guarded by mu; in revision order
	err    error      // guarded by mu; set once; reported after events drain

	// ready has room for one signal: the producer sends after adding
	// events or setting err; the consumer waits on it when empty.
	ready chan struct{}
	// space has room for one signal: the consumer sends after draining;
	// a producer waiting for room in push waits on it.
	space chan struct{}
}

func newEventQueue[O resource.Object](limit int) *eventQueue[O] {
	return &eventQueue[O]{limit: limit, ready: make(chan struct{}, 1), space: make(chan struct{}, 1)}
}

// tryPush appends e unless the queue holds limit events already.
func (q *eventQueue[O]) tryPush(e Event[O]) bool {
	q.mu.Lock()
	if len(q.events) >= q.limit {
		q.mu.Unlock()
		return false
	}
	q.events = append(q.events, e)
	q.mu.Unlock()
	signal(q.ready)
	return true
}

// push appends e, waiting for the consumer to make room if the queue is
// full. It fails only with ctx's error.
func (q *eventQueue[O]) push(ctx context.Context, e Event[O]) error {
	for !q.tryPush(e) {
		select {
		case <-q.space:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// close records the error that ends the stream. Events already queued are
// still delivered first. Only the first call counts.
func (q *eventQueue[O]) close(err error) {
	q.mu.Lock()
	if q.err == nil {
		q.err = err
	}
	q.mu.Unlock()
	signal(q.ready)
}

// next blocks until the queue has events or has been closed, then appends
// every queued event to buf. Once the queue is empty and closed it returns
// the closing error.
func (q *eventQueue[O]) next(ctx context.Context, buf []Event[O]) ([]Event[O], error) {
	for {
		q.mu.Lock()
		if n := len(q.events); n > 0 {
			buf = append(buf, q.events...)
			if cap(q.events) > 1024 {
				q.events = nil // let a burst's backing array go
			} else {
				clear(q.events)
				q.events = q.events[:0]
			}
			q.mu.Unlock()
			signal(q.space)
			return buf, nil
		}
		err := q.err
		q.mu.Unlock()
		if err != nil {
			return buf, err
		}
		select {
		case <-q.ready:
		case <-ctx.Done():
			return buf, ctx.Err()
		}
	}
}

// signal leaves a wake-up in ch (capacity 1) unless one is pending.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
