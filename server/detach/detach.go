// Package detach is the contract between a handler that can give the rest
// of its response body to the connection and a connection that can carry
// it: the handler hands over a Source and returns, and the connection
// pulls the bytes when the stream may send. A watch holds its stream for up
// to an hour and is idle most of that time; as a Source it costs no
// goroutine, no stack and no buffer while idle.
//
// Handlers and middleware use this package only; which connection carries
// the body (apiloom's HTTP/2 server, server/internal/h2) stays out of
// sight. A connection that cannot detach (HTTP/1.1, Go's own HTTP/2
// server) simply is not a Detacher, and the handler writes its body itself.
package detach

import (
	"bufio"
	"context"
	"net"
	"net/http"
)

// A Source is the rest of a response body, pulled by the connection's
// writer when the stream may send, instead of pushed by a handler
// goroutine.
//
// The connection never calls Append and Close at the same time, and calls
// Close exactly once; the source calls wake from any goroutine.
type Source interface {
	// Append appends to dst at most limit bytes of the body that are ready
	// now, without blocking, and reports whether the body ends with them.
	// Returning nothing and false means "nothing yet": the connection
	// waits for wake.
	Append(dst []byte, limit int) (out []byte, end bool)
	// Start hands the source the function it calls whenever Append may
	// have more to give (new data, or the end). wake never blocks and may
	// be called any number of times, before or after Append returns
	// nothing; a call the connection does not need costs a little CPU.
	// Start is called once, before the first Append.
	Start(wake func())
	// Close is called once, when the stream ends for any reason (the body
	// ended, the client reset the stream, the connection closed); the
	// source lets go of what it holds. Append is not called after it.
	Close()
}

// A Detacher is the ResponseWriter of a stream whose connection can carry
// the rest of the body from a Source. After DetachBody the handler returns
// at once and must not use the ResponseWriter again; the request's context
// stays alive until the stream ends, so the source may use it. Headers not
// yet written are sent first, as if WriteHeader(200) had been called.
//
// The connection calls the Source's wake when the stream's context
// (StreamContext) ends while the stream is open (the server shutting
// down), so a Source that ends on that context checks it in Append and
// need not watch it: an idle watch saves a registration on the context. A
// Source that ends on a context middleware derived must watch that itself.
type Detacher interface {
	DetachBody(src Source)
}

// Find returns the Detacher that w is or wraps, following Unwrap as
// http.ResponseController does, or false when the body cannot be detached.
func Find(w http.ResponseWriter) (Detacher, bool) {
	for {
		if d, ok := w.(Detacher); ok {
			return d, true
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return nil, false
		}
		w = u.Unwrap()
	}
}

// Observe is for middleware that needs to know when a response has really
// ended (an access log, a latency metric, tracing): a handler that detaches
// its body returns long before the body ends. Pass the returned writer to
// the next handler and call done when it returns; end is then called once,
// at once if the handler wrote its body itself, or when the connection
// closes the detached Source. The returned writer passes Flush, Hijack and
// Unwrap through, and can detach exactly when w can.
//
// end runs on the connection's goroutine for a detached body: it must be
// quick and keep nothing of the request it does not need.
func Observe(w http.ResponseWriter, end func()) (http.ResponseWriter, func()) {
	o := &observer{ResponseWriter: w, end: end}
	d, ok := Find(w)
	if !ok {
		return o, o.done
	}
	return &detachingObserver{observer: o, inner: d}, o.done
}

// observer is the writer Observe returns when w cannot detach.
type observer struct {
	http.ResponseWriter
	end      func()
	detached bool // set by DetachBody, on the handler's goroutine
}

func (o *observer) done() {
	if !o.detached {
		o.end()
	}
}

// Flush keeps streaming reachable for handlers that assert http.Flusher.
func (o *observer) Flush() { _ = http.NewResponseController(o.ResponseWriter).Flush() }

// Hijack passes through for WebSocket handlers, which assert http.Hijacker.
func (o *observer) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(o.ResponseWriter).Hijack()
}

// Unwrap lets http.ResponseController and Find reach the writer below.
func (o *observer) Unwrap() http.ResponseWriter { return o.ResponseWriter }

// detachingObserver is the writer Observe returns when w can detach.
type detachingObserver struct {
	*observer
	inner Detacher
}

// DetachBody hands src on, wrapped so that its Close also ends the
// response for the observer.
func (o *detachingObserver) DetachBody(src Source) {
	o.detached = true
	o.inner.DetachBody(&endingSource{Source: src, end: o.end})
}

// endingSource calls end after its Source is closed (which the connection
// does once).
type endingSource struct {
	Source
	end func()
}

func (e *endingSource) Close() {
	e.Source.Close()
	e.end()
}

// streamContextKey is the context key of WithStreamContext.
type streamContextKey struct{}

// WithStreamContext is for connections that can detach: it returns ctx,
// the context of a stream's request before any middleware saw it,
// carrying itself for StreamContext.
func WithStreamContext(ctx context.Context) context.Context {
	return context.WithValue(ctx, streamContextKey{}, ctx)
}

// StreamContext returns the context of the stream that ctx's request came
// on, as its connection made it: it ends when the request's context does
// (the stream ended, the connection closed, the server is shutting down)
// but holds none of the values middleware added (the user, the request's
// info, what the handler keeps for its response). A Source that outlives
// its handler, such as an idle watch held for up to an hour, derives its
// context from it so as not to keep those alive: they were 1.7 of the
// 4.1 KiB of heap an idle watch held, by heap profile over 20,000 watches.
// Without a connection that can detach, it returns ctx.
func StreamContext(ctx context.Context) context.Context {
	if s, ok := ctx.Value(streamContextKey{}).(context.Context); ok {
		return s
	}
	return ctx
}
