package watch

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/apiloom/apiloom/server/detach"
	"github.com/apiloom/apiloom/server/endpoints/responsewriters"
	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
)

// maxIdleBatch is the most events' room a Source keeps while its watch
// is idle: a watch that once caught up in a large batch (initial events
// come 1024 at a time) does not hold that batch's buffer for an hour.
const maxIdleBatch = 16

// Source is a watch's body as a detach.Source: the connection's writer
// pulls the frames when the stream may send, and no goroutine waits for
// the watch's events meanwhile. Its frames are the bytes StreamHTTP writes
// for the same events, including the final ERROR event, so a client cannot
// tell which of the two served it.
//
// The connection never calls Append and Close at the same time; the
// fields below are used by whichever is running.
type Source[O resource.Object, V View[O]] struct {
	path    string          // for the log; the request itself is not kept
	ctx     context.Context // the stream's (detach.StreamContext)
	timeout time.Duration
	watcher storage.Watcher[O]
	enc     Encoder[O, V]

	wake func()
	// timer sets timedOut and wakes the stream once the timeout passes: a
	// timer of its own rather than a context with a deadline, which would
	// cost an idle watch a context, a channel and a map besides the timer.
	timer    *time.Timer
	timedOut atomic.Bool
	// events are what the last Poll returned; those from next on are not
	// framed yet.
	events []storage.Event[O]
	next   int
	// rest is the unsent end of the current frame. A frame the encoder
	// built (Table and partial views) lives in its reused buffer, so rest
	// is sent before the next event is framed.
	rest []byte
	// err, once events are sent, ends the stream.
	err error
	// ending: the stream ends once rest is sent.
	ending bool
}

var _ detach.Source = (*Source[resource.Object, View[resource.Object]])(nil)

// NewSource returns the source of a watch whose context is ctx (the
// stream's, detach.StreamContext) that ends after timeout. The source owns
// the watcher from now on: Close stops it.
func NewSource[O resource.Object, V View[O]](r *http.Request, ctx context.Context, timeout time.Duration,
	watcher storage.Watcher[O], enc Encoder[O, V]) *Source[O, V] {
	return &Source[O, V]{path: r.URL.Path, ctx: ctx, timeout: timeout, watcher: watcher, enc: enc}
}

// Start implements detach.Source. The timeout wakes the stream, which
// then ends; so does the end of ctx, which the connection wakes the stream
// for (detach.Detacher).
func (s *Source[O, V]) Start(wake func()) {
	s.wake = wake
	s.timer = time.AfterFunc(s.timeout, func() {
		s.timedOut.Store(true)
		wake()
	})
}

// Append implements detach.Source. It fills dst up to limit with frames,
// splitting the last one if it does not fit, and polls the watcher for
// more while there is room. When the watcher has nothing, it asks to be
// woken (NotifyOnce) and returns what it has, possibly nothing.
func (s *Source[O, V]) Append(dst []byte, limit int) ([]byte, bool) {
	room := max(limit, 0)
	for {
		if len(s.rest) > 0 {
			n := min(len(s.rest), room)
			dst = append(dst, s.rest[:n]...)
			s.rest, room = s.rest[n:], room-n
			if len(s.rest) > 0 {
				return dst, false
			}
		}
		switch {
		case s.ending:
			return dst, true
		case room <= 0:
			return dst, false
		case s.next < len(s.events):
			frame, err := s.enc.Frame(&s.events[s.next])
			s.events[s.next] = storage.Event[O]{} // let the object go
			s.next++
			if err != nil {
				responsewriters.LogStreamFailed(s.ctx, s.path, "watch", err)
				s.ending = true
				return dst, true
			}
			s.rest = frame
		case s.err != nil:
			if !endsQuietly(s.ctx, s.err) {
				s.rest = s.enc.errorFrame(s.err)
			}
			s.ending = true
		case s.timedOut.Load() || s.ctx.Err() != nil:
			s.ending = true // the timeout, or the client left
		default:
			if !s.poll() {
				s.watcher.NotifyOnce(s.wake)
				return dst, false
			}
		}
	}
}

// poll refills events from the watcher and reports whether it found
// anything to send: events, or the error that ends the stream.
func (s *Source[O, V]) poll() bool {
	events, err := s.watcher.Poll(s.ctx, s.events[:0])
	s.events, s.next, s.err = events, 0, err
	if len(events) == 0 && cap(events) > maxIdleBatch {
		s.events = nil
	}
	return len(events) > 0 || err != nil
}

// Close implements detach.Source: it stops the watch and its timeout.
func (s *Source[O, V]) Close() {
	if s.timer != nil {
		s.timer.Stop()
	}
	s.watcher.Stop()
	clear(s.events)
	s.events, s.rest = nil, nil
}
