package watch

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
)

// minTimeout is the base of a watch's lifetime when the client names
// none: kube-apiserver's --min-request-timeout, 1800 s, stretched by a
// random factor in [1, 2) so that watches do not all end together.
const minTimeout = 1800 * time.Second

// Timeout is how long a watch may run: the client's timeoutSeconds,
// or minTimeout stretched when it names none or 0. A negative one is
// a watch that has already timed out, as kube-apiserver takes it.
func Timeout(seconds *int64) time.Duration {
	if seconds != nil && *seconds != 0 {
		return time.Duration(*seconds) * time.Second
	}
	return time.Duration(float64(minTimeout) * (1 + rand.Float64()))
}

// StreamHTTP writes the watch as a chunked HTTP/1.1 or HTTP/2 response
// with Content-Type contentType. Everything Next returns is written, then
// flushed once: a watcher that is behind catches up in few, large writes.
// Each batch must be written within writeTimeout (a write deadline on the
// connection; none if 0).
//
// Over HTTP/2 the deadline is cleared after each flush: an HTTP/2
// stream's write deadline (x/net's, and server/internal/h2's likewise)
// resets the stream when it passes, whether or not a write is waiting, so
// a deadline left armed would end every watch that stays idle for the
// timeout. Over HTTP/1.1 it stays armed (armedDeadline).
func StreamHTTP[O resource.Object, V View[O]](ctx context.Context, w http.ResponseWriter, r *http.Request, watcher *storage.Blocking[O], enc *Encoder[O, V], contentType string, writeTimeout time.Duration) {
	rc := http.NewResponseController(w)
	deadline := writeDeadline(writeTimeout, rc.SetWriteDeadline)
	flush := rc.Flush
	if r.ProtoMajor == 1 {
		deadline = armedDeadline(writeTimeout, rc.SetWriteDeadline, time.Now)
	} else if writeTimeout > 0 {
		flush = func() error {
			if err := rc.Flush(); err != nil {
				return err
			}
			if err := rc.SetWriteDeadline(time.Time{}); err != nil && !errors.Is(err, http.ErrNotSupported) {
				return err
			}
			return nil
		}
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(http.StatusOK)
	if err := deadline(); err != nil {
		streamFailed(r, "watch headers", err)
		return
	}
	if err := flush(); err != nil {
		streamFailed(r, "watch headers", err)
		return
	}
	send := func(frame []byte) error { _, err := w.Write(frame); return err }
	if err := enc.pump(ctx, watcher, deadline, send, flush); err != nil {
		streamFailed(r, "watch", err)
	}
}

// writeDeadline returns what pump calls before each batch: it sets the
// connection's write deadline timeout from now, through set, so that a
// client that takes none of a batch for that long fails the write and
// ends the watch. A writer without deadlines (set says
// http.ErrNotSupported) and a zero timeout make it do nothing.
func writeDeadline(timeout time.Duration, set func(time.Time) error) func() error {
	if timeout <= 0 {
		return func() error { return nil }
	}
	return func() error {
		if err := set(time.Now().Add(timeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
		return nil
	}
}

// armedDeadline is writeDeadline for HTTP/1.1, whose connection deadline
// matters only to writes: a deadline that passes while the watch is idle
// fails nothing until the next write. So it is left armed and set again
// only when less than half the timeout is left: a client that takes
// nothing of a batch is cut off within the timeout, as with writeDeadline,
// and a busy watch sets the deadline about twice a timeout rather than
// twice a batch. Those calls were a tenth of the server's CPU with 1,000
// HTTP/1.1 watchers at 100 events a second, by profile.
func armedDeadline(timeout time.Duration, set func(time.Time) error, now func() time.Time) func() error {
	if timeout <= 0 {
		return func() error { return nil }
	}
	var armed time.Time // the deadline set; zero: none yet
	return func() error {
		t := now()
		if !armed.IsZero() && armed.Sub(t) >= timeout/2 {
			return nil
		}
		armed = t.Add(timeout)
		if err := set(armed); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
		return nil
	}
}

// pump sends the watch's events, one frame each, until the watch ends.
// Everything one Next returns is sent, after a call of deadline, then
// flushed once. A storage error is sent as a final ERROR event; the
// stream's end, the timeout and the client leaving end it quietly. The
// error returned is a failure to encode or send, for the log.
func (e *Encoder[O, V]) pump(ctx context.Context, watcher *storage.Blocking[O], deadline func() error, send func([]byte) error, flush func() error) error {
	// The buffer grows only as far as this watcher's largest batch: most
	// watchers idle, and a preallocated batch per watcher would cost
	// kilobytes each across tens of thousands of them.
	var events []storage.Event[O]
	for {
		var err error
		events, err = watcher.Next(ctx, events[:0])
		if derr := deadline(); derr != nil {
			return derr
		}
		for i := range events {
			frame, ferr := e.Frame(&events[i])
			if ferr == nil {
				ferr = send(frame)
			}
			if ferr != nil {
				return ferr
			}
		}
		clear(events) // let the objects go while waiting
		if err != nil {
			if !endsQuietly(ctx, err) {
				_ = send(e.errorFrame(err))
			}
			_ = flush()
			return nil
		}
		if err := flush(); err != nil {
			return err
		}
	}
}

// endsQuietly reports whether a watch ending with err just ends, without an
// ERROR event: the stream's normal end, the timeout, the client leaving.
func endsQuietly(ctx context.Context, err error) bool {
	return errors.Is(err, io.EOF) || ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// CanFlush reports whether w, or a writer it wraps, can flush.
func CanFlush(w http.ResponseWriter) bool {
	_, ok := findWriter[http.Flusher](w)
	return ok
}

// findWriter returns w, or the first writer it wraps (through Unwrap, as
// http.ResponseController looks), that is a T.
func findWriter[T any](w http.ResponseWriter) (T, bool) {
	for {
		if t, ok := w.(T); ok {
			return t, true
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			var none T
			return none, false
		}
		w = u.Unwrap()
	}
}

// streamFailed records an error found after the response started, when
// the client can no longer be told: a write to a client that went away, or
// an object that did not encode. It logs what server/endpoints logs for
// its own streams.
func streamFailed(r *http.Request, what string, err error) {
	logStreamFailed(r.Context(), r.URL.Path, what, err)
}

// logStreamFailed is streamFailed for a watch that outlives its request's
// handler (a Source), which keeps only its path.
func logStreamFailed(ctx context.Context, path, what string, err error) {
	slog.DebugContext(ctx, "endpoints: response ended early", "path", path, "during", what, "err", err)
}
