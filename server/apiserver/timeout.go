package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/apiloom/apiloom/server/endpoints/responsewriters"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// errRequestTimeout is the cause of a request's context when its deadline
// passed, as opposed to its client leaving.
var errRequestTimeout = errors.New("apiserver: request timeout")

// invalidTimeoutInURL starts kube-apiserver's 400 for a ?timeout= that
// does not parse.
const invalidTimeoutInURL = "invalid timeout specified in the request URL"

// timeoutStatus is kube-apiserver's answer to a request that ran out of
// time (its timeout filter's): 504, reason Timeout, no Retry-After, so
// that client-go does not retry a write that may have happened.
func timeoutStatus() error {
	return apierrors.NewTimeoutError("request did not complete within the allotted timeout", 0)
}

// withRequestTimeout bounds each request that is not long-running by
// timeout, or by the client's ?timeout= when shorter, as kube-apiserver's
// --request-timeout does. At the deadline the request's context ends,
// and reads of its body and writes of its response fail (through
// http.ResponseController's deadlines, which net/http and server/
// internal/h2 implement): a client sending its body a byte a second, or
// accepting none of the response, holds its handler no longer. The client
// gets kube-apiserver's 504 Timeout Status or, when part of the response
// was out already, a cut connection (HTTP/1.1) or a reset stream
// (HTTP/2), as there is no way to turn it into a 504 then.
//
// Unlike kube-apiserver's filter, the handler keeps the request's
// goroutine: the 504 is written by the context's AfterFunc, which needs a
// goroutine only when the deadline passes, and the filter returns once
// the handler has. timeout 0 disables.
func withRequestTimeout(timeout time.Duration, next http.Handler) http.Handler {
	if timeout <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if longRunning(r) {
			next.ServeHTTP(w, r)
			return
		}
		d, err := requestTimeout(r.URL.Query(), timeout)
		if err != nil {
			responsewriters.WriteError(w, r, err)
			return
		}
		ctx, cancel := context.WithTimeoutCause(r.Context(), d, errRequestTimeout)
		defer cancel()
		tw := &timeoutWriter{
			w: w, header: w.Header().Clone(), ctx: ctx, expired: make(chan struct{}),
			body: r.Body != nil && r.Body != http.NoBody, http1: r.ProtoMajor == 1,
			accept: r.Header.Values("Accept"),
		}
		func() {
			stop := context.AfterFunc(ctx, tw.expire)
			returned := false
			defer func() {
				if !stop() {
					// It runs: wait, even if the handler panicked, so
					// that nothing is written after ServeHTTP returned.
					<-tw.expired
				} else if returned {
					// The handler may have returned as its context
					// ended, before the AfterFunc could start.
					tw.expire()
				}
			}()
			next.ServeHTTP(tw, r.WithContext(ctx))
			returned = true
		}()
		if tw.cut() {
			// What was written cannot end as it should: net/http closes
			// the connection and HTTP/2 resets the stream, quietly.
			panic(http.ErrAbortHandler)
		}
	})
}

// requestTimeout is the request's time limit: max, or the client's
// ?timeout= when that is positive and shorter, as kube-apiserver's
// WithRequestDeadline has it. A timeout that does not parse is a 400.
func requestTimeout(q url.Values, max time.Duration) (time.Duration, error) {
	v := q.Get("timeout")
	if v == "" {
		return max, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, apierrors.NewBadRequest(fmt.Sprintf("%s - %s", invalidTimeoutInURL, err.Error()))
	}
	if d > 0 && d < max {
		return d, nil
	}
	return max, nil
}

// timeoutWriter is the ResponseWriter of a request under
// withRequestTimeout. Until the deadline it writes through to w; from the
// deadline on, the handler's writes fail with http.ErrHandlerTimeout and
// w belongs to expire.
type timeoutWriter struct {
	// Immutable.
	w       http.ResponseWriter
	ctx     context.Context
	expired chan struct{} // closed when expire returned
	body    bool          // the request has a body
	http1   bool          // served by net/http's HTTP/1.1
	// accept is the request's Accept header, which the 504 is encoded
	// for: inner filters may change the request's headers meanwhile.
	accept []string
	// header is the handler's, copied to w's at the response's start; the
	// handler's goroutine alone uses it.
	header http.Header

	mu       sync.Mutex
	timedOut bool // guarded by mu: the deadline passed
	started  bool // guarded by mu: the handler's response began
}

var _ http.Flusher = (*timeoutWriter)(nil)

func (tw *timeoutWriter) Header() http.Header { return tw.header }

func (tw *timeoutWriter) WriteHeader(code int) {
	if tw.start() {
		tw.w.WriteHeader(code)
	}
}

func (tw *timeoutWriter) Write(p []byte) (int, error) {
	if !tw.start() {
		return 0, http.ErrHandlerTimeout
	}
	return tw.w.Write(p)
}

func (tw *timeoutWriter) Flush() { _ = tw.FlushError() }

// FlushError is Flush for http.ResponseController.
func (tw *timeoutWriter) FlushError() error {
	if !tw.start() {
		return http.ErrHandlerTimeout
	}
	return http.NewResponseController(tw.w).Flush()
}

// Unwrap lets http.ResponseController reach the connection's deadlines.
func (tw *timeoutWriter) Unwrap() http.ResponseWriter { return tw.w }

// start reports whether the handler may still write, and marks its
// response as begun. A handler reacting to its context's end gets false
// even before expire has run, so that what it writes then never races
// the 504.
func (tw *timeoutWriter) start() bool {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if !tw.timedOut && errors.Is(context.Cause(tw.ctx), errRequestTimeout) {
		tw.timedOut = true
	}
	if tw.timedOut {
		return false
	}
	if !tw.started {
		tw.started = true
		dst := tw.w.Header()
		for k, v := range tw.header {
			dst[k] = v
		}
	}
	return true
}

// expire runs when the request's context ends, or once the handler
// returned. At the deadline (not when the client left, nor before the
// deadline) it ends the handler's reads and writes and, if the handler
// has written nothing, answers 504.
func (tw *timeoutWriter) expire() {
	defer close(tw.expired)
	if !errors.Is(context.Cause(tw.ctx), errRequestTimeout) {
		return
	}
	tw.mu.Lock()
	tw.timedOut = true
	started := tw.started
	tw.mu.Unlock()
	rc := http.NewResponseController(tw.w)
	now := time.Now()
	if tw.body {
		// The handler may wait for the rest of the body. (Without one,
		// there is nothing to end, and over HTTP/1.1 a failed read ends
		// the connection's context, see below.)
		_ = rc.SetReadDeadline(now)
	}
	if started {
		_ = rc.SetWriteDeadline(now) // the handler's writes stop here; the filter then cuts the response
		return
	}
	if tw.body && tw.http1 {
		// net/http takes a failed read of the connection for the client
		// leaving and cancels the connection's context, which later
		// requests on it would inherit: it must serve none.
		tw.w.Header().Set("Connection", "close")
	}
	accepts := (&http.Request{Header: http.Header{"Accept": tw.accept}}).WithContext(tw.ctx)
	responsewriters.WriteError(tw.w, accepts, timeoutStatus())
	_ = rc.Flush() // now, whether or not the handler is quick to return
}

// cut reports whether the deadline passed after the response began.
func (tw *timeoutWriter) cut() bool {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	return tw.timedOut && tw.started
}
