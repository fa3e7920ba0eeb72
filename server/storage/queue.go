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
// watch. The consumer polls (poll) and, when there is nothing, asks to be
// woken (notifyOnce).
type eventQueue[O resource.Object] struct {
	limit int // immutable

	mu     sync.Mutex
	events []Event[O] // guarded by mu; in revision order
	err    error      // guarded by mu; set once; reported after events drain
	// wake is the consumer's wake-up, set by notifyOnce and taken by the
	// next push or close; guarded by mu.
	wake func()

	// space has room for one signal: the consumer sends after draining;
	// a producer waiting for room in push waits on it.
	space chan struct{}
}

func newEventQueue[O resource.Object](limit int) *eventQueue[O] {
	return &eventQueue[O]{limit: limit, space: make(chan struct{}, 1)}
}

// tryPush appends e unless the queue holds limit events already.
func (q *eventQueue[O]) tryPush(e Event[O]) bool {
	q.mu.Lock()
	if len(q.events) >= q.limit {
		q.mu.Unlock()
		return false
	}
	q.events = append(q.events, e)
	wake := q.takeWakeLocked()
	q.mu.Unlock()
	if wake != nil {
		wake()
	}
	return true
}

// takeWakeLocked returns the consumer's pending wake, if any, and forgets
// it: the consumer asks again after its next poll. q.mu must be held.
func (q *eventQueue[O]) takeWakeLocked() func() {
	wake := q.wake
	q.wake = nil
	return wake
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
	wake := q.takeWakeLocked()
	q.mu.Unlock()
	if wake != nil {
		wake()
	}
}

// poll appends every queued event to buf without waiting. Once the queue
// is empty and closed it returns the closing error; ctx's error once ctx
// has ended and nothing is queued.
func (q *eventQueue[O]) poll(ctx context.Context, buf []Event[O]) ([]Event[O], error) {
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
	if err == nil {
		err = ctx.Err()
	}
	return buf, err
}

// notifyOnce has wake called when the queue next gets an event or is
// closed, or at once if it has either already.
func (q *eventQueue[O]) notifyOnce(wake func()) {
	q.mu.Lock()
	ready := len(q.events) > 0 || q.err != nil
	if !ready {
		q.wake = wake
	}
	q.mu.Unlock()
	if ready {
		wake()
	}
}

// signal leaves a wake-up in ch (capacity 1) unless one is pending.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
