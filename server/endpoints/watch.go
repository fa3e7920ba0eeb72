package endpoints

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/server/detach"
	"github.com/apiloom/apiloom/server/endpoints/request"
	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/wire"
)

// minWatchTimeout is the base of a watch's lifetime when the client names
// none: kube-apiserver's --min-request-timeout, 1800 s, stretched by a
// random factor in [1, 2) so that watches do not all end together.
const minWatchTimeout = 1800 * time.Second

// watchTimeout is how long a watch may run: the client's timeoutSeconds,
// or minWatchTimeout stretched when it names none or 0. A negative one is
// a watch that has already timed out, as kube-apiserver takes it.
func watchTimeout(seconds *int64) time.Duration {
	if seconds != nil && *seconds != 0 {
		return time.Duration(*seconds) * time.Second
	}
	return time.Duration(float64(minWatchTimeout) * (1 + rand.Float64()))
}

// watch serves a watch: a 200 stream of one frame per event, the headers
// flushed at once. It ends cleanly when the timeout passes, the client
// goes away or storage ends the stream; a storage error (410 Expired for a
// watcher that fell behind) is sent as an ERROR event and then ends it.
// A WebSocket upgrade gets the same stream, one event per message.
//
// Over a connection that can carry a body from a detach.Source, the watch
// is handed to the connection as a watchSource and the handler returns:
// an idle watch then holds no goroutine. Otherwise the handler's goroutine
// pumps the events, blocking in a storage.Blocking over the same watcher.
func (h *handler[O]) watch(w http.ResponseWriter, r *http.Request, lr request.List, out output) error {
	ws := isWebSocket(r)
	var detacher detach.Detacher
	if !ws {
		if detacher, _ = detach.Find(w); detacher == nil && !canFlush(w) {
			return errNoFlusher()
		}
	}

	timeout := watchTimeout(lr.TimeoutSeconds)
	if timeout <= 0 {
		// Over before it began: kube-apiserver answers an empty stream.
		w.Header().Set("Content-Type", out.streamContentType())
		w.WriteHeader(http.StatusOK)
		return nil
	}
	enc := eventEncoder[O]{h: h, out: out, headers: true}
	if detacher != nil {
		// An idle detached watch holds its context for up to the
		// timeout: the stream's, without the request's values (detach),
		// and its timeout is the source's timer.
		ctx := detach.StreamContext(r.Context())
		watcher, err := h.store.Watch(ctx, lr.Options)
		if err != nil {
			return storageStatus(err, h.gr, "", verbWatch)
		}
		// The source owns the watcher from here on.
		w.Header().Set("Content-Type", out.streamContentType())
		w.WriteHeader(http.StatusOK)
		detacher.DetachBody(newWatchSource(r, ctx, timeout, watcher, enc))
		return nil
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	watcher, err := h.store.Watch(ctx, lr.Options)
	if err != nil {
		return storageStatus(err, h.gr, "", verbWatch)
	}
	events := storage.NewBlocking(watcher)
	defer events.Stop()
	if ws {
		serveWebSocket(ctx, w, r, events, &enc)
	} else {
		streamHTTP(ctx, w, r, events, &enc)
	}
	return nil
}

// errNoFlusher is kube-apiserver's answer to a watch it cannot stream.
func errNoFlusher() error {
	return apierrors.NewInternalError(errors.New("unable to start watch - can't get http.Flusher"))
}

// streamHTTP writes the watch as a chunked HTTP/1.1 or HTTP/2 response.
// Everything Next returns is written, then flushed once: a watcher that
// is behind catches up in few, large writes. Each batch must be written
// within the WatchWriteTimeout (a write deadline on the connection).
//
// Over HTTP/2 the deadline is cleared after each flush: an HTTP/2
// stream's write deadline (x/net's, and server/internal/h2's likewise)
// resets the stream when it passes, whether or not a write is waiting, so
// a deadline left armed would end every watch that stays idle for the
// timeout. Over HTTP/1.1 it stays armed (armedDeadline).
func streamHTTP[O resource.Object](ctx context.Context, w http.ResponseWriter, r *http.Request, watcher *storage.Blocking[O], enc *eventEncoder[O]) {
	rc := http.NewResponseController(w)
	deadline := writeDeadline(enc.h.limits.WatchWriteTimeout, rc.SetWriteDeadline)
	flush := rc.Flush
	if r.ProtoMajor == 1 {
		deadline = armedDeadline(enc.h.limits.WatchWriteTimeout, rc.SetWriteDeadline, time.Now)
	} else if enc.h.limits.WatchWriteTimeout > 0 {
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
	w.Header().Set("Content-Type", enc.out.streamContentType())
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
func (e *eventEncoder[O]) pump(ctx context.Context, watcher *storage.Blocking[O], deadline func() error, send func([]byte) error, flush func() error) error {
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
			frame, ferr := e.frame(&events[i])
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

// canFlush reports whether w, or a writer it wraps, can flush.
func canFlush(w http.ResponseWriter) bool {
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

// eventEncoder turns events into watch frames in the negotiated view. It
// is used by one watch's goroutine.
type eventEncoder[O resource.Object] struct {
	h   *handler[O]
	out output
	// headers is true until the first Table event, which alone carries the
	// column definitions.
	headers bool
	buf     []byte // the last frame; reused
}

// frame returns ev's frame. A frame the producer encoded (the watch cache
// encodes each event once for all watchers, in each format asked for) is
// used as it is; the returned slice is valid until the next call.
func (e *eventEncoder[O]) frame(ev *storage.Event[O]) ([]byte, error) {
	if e.out.enc == encCBOR || e.out.enc == encProtobuf {
		return e.frameAs(ev)
	}
	if e.out.target == asObject && ev.Frame != nil {
		return ev.Frame, nil
	}
	obj, err := e.object(ev)
	if err != nil {
		return nil, err
	}
	e.buf = wire.AppendWatchFrame(e.buf[:0], string(ev.Type), obj)
	return e.buf, nil
}

// object encodes ev's object in the negotiated view and encoding.
func (e *eventEncoder[O]) object(ev *storage.Event[O]) ([]byte, error) {
	switch e.out.target {
	case asTable:
		t, err := e.h.table([]O{ev.Object}, nil, e.out, e.headers)
		if err != nil {
			return nil, err
		}
		e.headers = false
		t.ResourceVersion = ev.Object.GetResourceVersion()
		return encodeView(t, e.out)
	case asPartial:
		return encodeView(partialObject(ev.Object, e.out), e.out)
	default:
		return e.h.encodeObject(ev.Object, e.out)
	}
}

// errorFrame is the ERROR event that reports err and ends the stream.
func (e *eventEncoder[O]) errorFrame(err error) []byte {
	st := toStatus(storageStatus(err, e.h.gr, "", verbWatch))
	switch e.out.enc {
	case encCBOR:
		return wire.AppendCBORWatchFrame(nil, string(watch.Error), encodeStatusAs(st, e.out))
	case encProtobuf:
		return wire.AppendProtobufWatchFrame(nil, string(watch.Error), encodeStatusAs(st, e.out))
	}
	return wire.AppendWatchFrame(nil, string(watch.Error), encodeStatus(st))
}
