package h2_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/apiloom/apiloom/server/detach"
	"github.com/apiloom/apiloom/server/internal/h2"
)

// testSource is a Source fed by the test: Push adds bytes, End ends it.
type testSource struct {
	mu      sync.Mutex
	pending []byte
	ended   bool
	wake    func()
	appends int

	started, closed chan struct{}
}

func newTestSource() *testSource {
	return &testSource{started: make(chan struct{}), closed: make(chan struct{})}
}

func (s *testSource) Start(wake func()) {
	s.mu.Lock()
	s.wake = wake
	s.mu.Unlock()
	close(s.started)
}

func (s *testSource) Append(dst []byte, limit int) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.appends++
	n := min(limit, len(s.pending))
	dst = append(dst, s.pending[:n]...)
	s.pending = s.pending[n:]
	return dst, s.ended && len(s.pending) == 0
}

func (s *testSource) Close() { close(s.closed) } // a second Close panics

func (s *testSource) appendCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appends
}

func (s *testSource) push(b []byte, end bool) {
	s.mu.Lock()
	s.pending = append(s.pending, b...)
	s.ended = s.ended || end
	wake := s.wake
	s.mu.Unlock()
	wake()
}

// detachingHandler writes a prefix, detaches src and returns; the
// request's context must outlive the handler.
func detachingHandler(src *testSource, ctxs chan<- context.Context) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "prefix;")
		w.(detach.Detacher).DetachBody(src)
		ctxs <- r.Context()
	})
}

func TestDetachedBodyIsPulledFromTheSource(t *testing.T) {
	src := newTestSource()
	ctxs := make(chan context.Context, 1)
	ts, c, _ := newServer(t, detachingHandler(src, ctxs))
	resp, err := c.Get(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Type") != "application/json" || resp.ContentLength != -1 {
		t.Fatalf("header %v, length %d", resp.Header, resp.ContentLength)
	}
	ctx := <-ctxs
	waitClosed(t, src.started, "Start")

	read := func(n int) string {
		t.Helper()
		b := make([]byte, n)
		if _, err := io.ReadFull(resp.Body, b); err != nil {
			t.Fatalf("read: %v", err)
		}
		return string(b)
	}
	if got := read(len("prefix;")); got != "prefix;" {
		t.Fatalf("prefix %q", got)
	}
	if ctx.Err() != nil {
		t.Fatal("the request's context ended with the handler, before the stream")
	}
	src.push([]byte("event-1\n"), false)
	if got := read(8); got != "event-1\n" {
		t.Fatalf("got %q", got)
	}
	// More than a frame and more than the client's first window: split
	// into frames, sent as the window allows.
	big := bytes.Repeat([]byte("x"), 200<<10)
	src.push(big, false)
	if got := read(len(big)); got != string(big) {
		t.Fatal("a large push came back different")
	}
	src.push([]byte("last"), true)
	rest, err := io.ReadAll(resp.Body)
	if err != nil || string(rest) != "last" {
		t.Fatalf("end: %q, %v", rest, err)
	}
	waitClosed(t, src.closed, "Close after the end")
	waitClosed(t, ctx.Done(), "the request's context to end with the stream")
}

func TestClientResetClosesSource(t *testing.T) {
	src := newTestSource()
	ctxs := make(chan context.Context, 1)
	ts, c, _ := newServer(t, detachingHandler(src, ctxs))
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL, nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	reqCtx := <-ctxs
	waitClosed(t, src.started, "Start")
	cancel()
	waitClosed(t, src.closed, "Close after the client's RST_STREAM")
	waitClosed(t, reqCtx.Done(), "the request's context to end")
	src.push([]byte("after close"), false) // a late wake is harmless
}

// TestShutdownEndsDetachedStreamsViaContext: at shutdown the server ends
// long-running requests through their base context; a detached stream's
// source sees it and ends, and the connection then closes.
func TestShutdownWithDetachedStream(t *testing.T) {
	src := newTestSource()
	ctxs := make(chan context.Context, 1)
	ts, c, _ := newServer(t, detachingHandler(src, ctxs))
	resp, err := c.Get(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	<-ctxs
	shut := make(chan error, 1)
	go func() { shut <- ts.Config.Shutdown(context.Background()) }()
	src.push([]byte("bye"), true) // the source ends, as a watch does at shutdown
	b, err := io.ReadAll(resp.Body)
	if err != nil || !strings.HasSuffix(string(b), "bye") {
		t.Fatalf("body %q, %v", b, err)
	}
	if err := <-shut; err != nil {
		t.Fatal(err)
	}
	waitClosed(t, src.closed, "Close")
}

// resetDuringAppend is a Source whose first Append waits until the client
// has reset the stream, then returns bytes anyway.
type resetDuringAppend struct {
	reqCtx  context.Context
	entered chan struct{}
	closed  chan struct{}
	calls   int
}

func (s *resetDuringAppend) Start(wake func()) { wake() }
func (s *resetDuringAppend) Close()            { close(s.closed) }
func (s *resetDuringAppend) Append(dst []byte, limit int) ([]byte, bool) {
	if s.calls++; s.calls == 1 {
		close(s.entered)
		<-s.reqCtx.Done()
		return append(dst, bytes.Repeat([]byte("z"), min(limit, 100))...), false
	}
	return dst, false
}

// TestResetWhileAppending: a stream reset while its Source is appending
// must not leave a broken frame behind; the connection's other streams
// go on.
func TestResetWhileAppending(t *testing.T) {
	srcs := make(chan *resetDuringAppend, 1)
	ts, c, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/detach" {
			_, _ = io.WriteString(w, "still fine")
			return
		}
		src := &resetDuringAppend{reqCtx: r.Context(), entered: make(chan struct{}), closed: make(chan struct{})}
		srcs <- src
		w.(detach.Detacher).DetachBody(src)
	}))
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/detach", nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		// The response's header waits in the writer's buffer behind the
		// blocked Append, so Do returns only once the request is cancelled.
		if resp, err := c.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	src := <-srcs
	waitClosed(t, src.entered, "Append")
	cancel() // the client resets the stream
	waitClosed(t, src.closed, "Close after the reset")
	waitClosed(t, done, "the cancelled request to return")
	for range 3 {
		if _, body := get(t, c, ts.URL+"/other"); string(body) != "still fine" {
			t.Fatalf("after the reset: %q", body)
		}
	}
}

// panickingSource is a buggy Source.
type panickingSource struct{ started chan struct{} }

func (s *panickingSource) Start(wake func())               { close(s.started); wake() }
func (*panickingSource) Append([]byte, int) ([]byte, bool) { panic("buggy source") }
func (*panickingSource) Close()                            {}

// TestPanickingSourceEndsOnlyItsConnection: a bug in a Source costs its
// connection, not the server.
func TestPanickingSourceEndsOnlyItsConnection(t *testing.T) {
	ts, c, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/buggy" {
			w.(detach.Detacher).DetachBody(&panickingSource{started: make(chan struct{})})
			return
		}
		_, _ = io.WriteString(w, "alive")
	}))
	if resp, err := c.Get(ts.URL + "/buggy"); err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil {
			t.Fatal("a stream whose source panicked ended cleanly")
		}
	}
	if _, body := get(t, c, ts.URL+"/ok"); string(body) != "alive" {
		t.Fatalf("after the panic: %q", body)
	}
}

// TestNoBodyResponseClosesSource: a response that may not have a body (to
// HEAD, or 204 and 304) ends with its header even if the handler detached
// a Source, which is closed unused.
func TestNoBodyResponseClosesSource(t *testing.T) {
	for _, tc := range []struct {
		method string
		status int
	}{{http.MethodHead, http.StatusOK}, {http.MethodGet, http.StatusNoContent}, {http.MethodGet, http.StatusNotModified}} {
		t.Run(fmt.Sprintf("%s %d", tc.method, tc.status), func(t *testing.T) {
			src := newTestSource()
			rc := newRawClient(t, &h2.Server{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				w.(detach.Detacher).DetachBody(src)
			}))
			rc.headers(1, true, ":method", tc.method, ":scheme", "https", ":authority", "x", ":path", "/")
			h := rc.next(isHeaders(1)).(*http2.MetaHeadersFrame)
			if !h.StreamEnded() {
				t.Fatal("the header of a response without a body does not end the stream")
			}
			var length bool
			for _, f := range h.RegularFields() {
				length = length || f.Name == "content-length"
			}
			if h.PseudoValue("status") != strconv.Itoa(tc.status) || length {
				t.Fatalf("header %v", h.Fields)
			}
			waitClosed(t, src.closed, "the unused Source to be closed")
		})
	}
}

// ctxSource ends once its request's context has, and watches nothing
// itself: it relies on the connection to wake it (detach.Detacher).
type ctxSource struct {
	ctx    context.Context
	closed chan struct{}
}

func (s *ctxSource) Start(func()) {}
func (s *ctxSource) Append(dst []byte, _ int) ([]byte, bool) {
	return dst, s.ctx.Err() != nil
}
func (s *ctxSource) Close() { close(s.closed) }

// TestBaseContextEndWakesDetachedSources: when the connection's base
// context ends (the server shutting down), the connection wakes every
// detached Source, which sees its request's context ended and ends its
// body, without having registered on the context.
func TestBaseContextEndWakesDetachedSources(t *testing.T) {
	base, endRequests := context.WithCancel(context.Background())
	defer endRequests()
	sources := make(chan *ctxSource, 2)
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		src := &ctxSource{ctx: r.Context(), closed: make(chan struct{})}
		w.(detach.Detacher).DetachBody(src)
		sources <- src
	}))
	ts.Config.BaseContext = func(net.Listener) context.Context { return base }
	h2.Configure(ts.Config, &h2.Server{})
	ts.TLS = ts.Config.TLSConfig
	ts.StartTLS()
	defer ts.Close()
	tr := &http.Transport{ForceAttemptHTTP2: true, TLSClientConfig: ts.Client().Transport.(*http.Transport).TLSClientConfig}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}

	var bodies []io.ReadCloser
	for range 2 {
		resp, err := c.Get(ts.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.ProtoMajor != 2 {
			t.Fatalf("served over %s", resp.Proto)
		}
		bodies = append(bodies, resp.Body)
	}
	srcs := []*ctxSource{<-sources, <-sources}
	endRequests()
	for i, body := range bodies {
		done := make(chan error, 1)
		go func() {
			_, err := io.ReadAll(body)
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("body %d: %v", i, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("body %d did not end after the base context", i)
		}
		waitClosed(t, srcs[i].closed, "Close")
	}
}
