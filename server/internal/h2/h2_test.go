package h2_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apiloom/apiloom/server/detach"
	"github.com/apiloom/apiloom/server/internal/h2"
)

// newServer starts an HTTPS server whose HTTP/2 is served by h2, and
// returns it with a client that speaks HTTP/2 to it.
func newServer(t testing.TB, h http.Handler, opts ...func(*h2.Server, *http.Transport)) (*httptest.Server, *http.Client, *h2.Server) {
	t.Helper()
	ts := httptest.NewUnstartedServer(h)
	srv := &h2.Server{}
	tr := &http.Transport{ForceAttemptHTTP2: true}
	for _, o := range opts {
		o(srv, tr)
	}
	h2.Configure(ts.Config, srv)
	ts.TLS = ts.Config.TLSConfig
	ts.StartTLS()
	t.Cleanup(ts.Close)
	tr.TLSClientConfig = ts.Client().Transport.(*http.Transport).TLSClientConfig
	t.Cleanup(tr.CloseIdleConnections)
	return ts, &http.Client{Transport: tr}, srv
}

func get(t *testing.T, c *http.Client, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ProtoMajor != 2 {
		t.Fatalf("served over %s, want HTTP/2", resp.Proto)
	}
	return resp, body
}

// readBody returns a function that reads a response's whole body, for a
// goroutine that may not call t.Fatal: failures are t.Error and false.
func readBody(t *testing.T) func(*http.Response, error) ([]byte, bool) {
	return func(resp *http.Response, err error) ([]byte, bool) {
		if err != nil {
			t.Error(err)
			return nil, false
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Error(err)
			return nil, false
		}
		return b, true
	}
}

func TestGetSetsContentLengthAndHeaders(t *testing.T) {
	ts, c, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := w.(detach.Detacher); !ok || r.ProtoMajor != 2 {
			t.Errorf("not served by h2: %T %s", w, r.Proto)
		}
		w.Header().Set("X-Path", r.URL.Path)
		w.Header().Add("X-Multi", "a")
		w.Header().Add("X-Multi", "b")
		w.Header().Set("Connection", "close") // connection-specific: dropped
		fmt.Fprintf(w, "hello %s", r.URL.Query().Get("who"))
	}))
	resp, body := get(t, c, ts.URL+"/a/b?who=h2")
	if string(body) != "hello h2" {
		t.Fatalf("body %q", body)
	}
	if resp.ContentLength != int64(len(body)) {
		t.Errorf("Content-Length %d, want %d", resp.ContentLength, len(body))
	}
	if got := resp.Header.Get("X-Path"); got != "/a/b" {
		t.Errorf("X-Path %q", got)
	}
	if got := resp.Header.Values("X-Multi"); len(got) != 2 {
		t.Errorf("X-Multi %q", got)
	}
	if resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" || resp.Header.Get("Date") == "" {
		t.Errorf("no sniffed Content-Type or Date: %v", resp.Header)
	}
}

func TestStatusWithoutBody(t *testing.T) {
	ts, c, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
		if _, err := w.Write([]byte("x")); !errors.Is(err, http.ErrBodyNotAllowed) {
			t.Errorf("Write after 204: %v", err)
		}
	}))
	resp, body := get(t, c, ts.URL)
	if resp.StatusCode != http.StatusNoContent || len(body) != 0 {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
}

// TestLargeBodiesBothWays sends and receives bodies larger than every
// flow-control window, so both directions wait for WINDOW_UPDATEs.
func TestLargeBodiesBothWays(t *testing.T) {
	ts, c, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("read body: %v", err)
			return
		}
		if r.ContentLength != int64(len(b)) {
			t.Errorf("ContentLength %d, read %d", r.ContentLength, len(b))
		}
		_, _ = w.Write(b)
		_, _ = w.Write(b)
	}), func(_ *h2.Server, tr *http.Transport) {
		tr.HTTP2 = &http.HTTP2Config{MaxReceiveBufferPerStream: 64 << 10, MaxReceiveBufferPerConnection: 64 << 10}
	})
	payload := bytes.Repeat([]byte("0123456789abcdef"), 3<<20/16)
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			got, ok := readBody(t)(c.Post(ts.URL, "application/octet-stream", bytes.NewReader(payload)))
			if !ok {
				return
			}
			if !bytes.Equal(got, append(payload[:len(payload):len(payload)], payload...)) {
				t.Errorf("echo of %d bytes came back as %d bytes, not equal", 2*len(payload), len(got))
			}
		})
	}
	wg.Wait()
}

func TestManyConcurrentStreams(t *testing.T) {
	ts, c, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.URL.Path)
	}), func(s *h2.Server, _ *http.Transport) { s.MaxConcurrentStreams = 20 })
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Go(func() {
			resp, err := c.Get(fmt.Sprintf("%s/%d", ts.URL, i))
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if string(b) != fmt.Sprintf("/%d", i) {
				t.Errorf("stream %d got %q", i, b)
			}
		})
	}
	wg.Wait()
}

// TestFlushSendsAtOnce checks that Flush gets the bytes to the client
// while the handler still runs.
func TestFlushSendsAtOnce(t *testing.T) {
	release := make(chan struct{})
	ts, c, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "first\n")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, "second\n")
	}))
	resp, err := c.Get(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 6)
	if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != "first\n" {
		t.Fatalf("first read %q, %v", buf, err)
	}
	close(release)
	rest, err := io.ReadAll(resp.Body)
	if err != nil || string(rest) != "second\n" {
		t.Fatalf("rest %q, %v", rest, err)
	}
}

func TestClientCancelEndsRequestContext(t *testing.T) {
	started, ended := make(chan struct{}), make(chan struct{})
	ts, c, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.(http.Flusher).Flush()
		close(started)
		<-r.Context().Done()
		close(ended)
	}))
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL, nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	<-started
	cancel() // the client resets the stream
	waitClosed(t, ended, "the handler's context to end")
}

func TestHandlerPanicResetsOnlyItsStream(t *testing.T) {
	ts, c, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/panic" {
			panic(http.ErrAbortHandler)
		}
		_, _ = io.WriteString(w, "ok")
	}))
	if resp, err := c.Get(ts.URL + "/panic"); err == nil {
		resp.Body.Close()
		t.Fatal("a panicking handler's request succeeded")
	}
	if _, body := get(t, c, ts.URL+"/fine"); string(body) != "ok" {
		t.Fatalf("after a panic: %q", body)
	}
}

func TestShutdownLetsRequestsFinish(t *testing.T) {
	release, started := make(chan struct{}), make(chan struct{})
	ts, c, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release
		_, _ = io.WriteString(w, "done")
	}))
	type result struct {
		body string
		err  error
	}
	got := make(chan result, 1)
	go func() {
		resp, err := c.Get(ts.URL)
		if err != nil {
			got <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		got <- result{string(b), err}
	}()
	<-started
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		shut <- ts.Config.Shutdown(ctx)
	}()
	close(release)
	if r := <-got; r.err != nil || r.body != "done" {
		t.Fatalf("in-flight request: %q, %v", r.body, r.err)
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// TestUnreadBodiesReturnTheirWindow: a handler that answers without
// reading the body must not use up the connection's receive window, or
// every later upload on the connection would hang.
func TestUnreadBodiesReturnTheirWindow(t *testing.T) {
	ts, c, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/read" {
			_, _ = io.Copy(io.Discard, r.Body)
			return
		}
		w.WriteHeader(http.StatusForbidden)
	}))
	body := bytes.Repeat([]byte("b"), 200<<10)
	// More unread bytes than the connection's 4 MiB window.
	for range 40 {
		resp, err := c.Post(ts.URL+"/deny", "application/octet-stream", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/read", bytes.NewReader(body))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("an upload after unread ones: %v", err)
	}
	resp.Body.Close()
}

// TestLargeFirstWrite: a body that starts with one large Write (lent to
// the connection, not copied) arrives whole, with a sniffed Content-Type.
func TestLargeFirstWrite(t *testing.T) {
	page := "<html><body>" + strings.Repeat("x", 100<<10) + "</body></html>"
	ts, c, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, page)
		_, _ = io.WriteString(w, "tail")
	}))
	resp, body := get(t, c, ts.URL)
	if string(body) != page+"tail" {
		t.Fatalf("body of %d bytes, want %d", len(body), len(page)+4)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Fatalf("Content-Type %q", ct)
	}
}

// TestConfigureTakesTheServerTimeouts: unset, the connection's timeouts
// are the http.Server's, as for HTTP/1.1.
func TestConfigureTakesTheServerTimeouts(t *testing.T) {
	hs := &http.Server{ReadHeaderTimeout: 7 * time.Second, IdleTimeout: 9 * time.Second, MaxHeaderBytes: 5000}
	s := &h2.Server{}
	h2.Configure(hs, s)
	if s.ReadHeaderTimeout != 7*time.Second || s.IdleTimeout != 9*time.Second || s.MaxHeaderListSize != 5000 {
		t.Fatalf("configured %+v", s)
	}
}

// TestSmallWritesArriveWholeAndInOrder: a body written in small pieces, as
// a LIST is written item by item, goes through the handler's two buffers,
// which swap with what the writer sends from. Every piece is distinct, the
// client's window is small (so the handler waits for the writer), and some
// writes are flushed: a buffer reused while the writer still read from it
// would show as a different body, or to the race detector.
func TestSmallWritesArriveWholeAndInOrder(t *testing.T) {
	var want bytes.Buffer
	for i := 0; want.Len() < 3<<20; i++ {
		fmt.Fprintf(&want, "%d:%s;", i, strings.Repeat(string(rune('a'+i%26)), i*7919%20000))
	}
	body := want.Bytes()
	ts, c, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f := w.(http.Flusher)
		for i, rest := 0, body; len(rest) > 0; i++ {
			n := min(len(rest), 1+i*104729%20000)
			if _, err := w.Write(rest[:n]); err != nil {
				t.Errorf("write: %v", err)
				return
			}
			rest = rest[n:]
			if i%13 == 0 {
				f.Flush()
			}
		}
	}), func(_ *h2.Server, tr *http.Transport) {
		tr.HTTP2 = &http.HTTP2Config{MaxReceiveBufferPerStream: 64 << 10, MaxReceiveBufferPerConnection: 64 << 10}
	})
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			got, ok := readBody(t)(c.Get(ts.URL))
			if !ok {
				return
			}
			if !bytes.Equal(got, body) {
				i := 0
				for i < min(len(got), len(body)) && got[i] == body[i] {
					i++
				}
				t.Errorf("body of %d bytes, want %d; they differ from byte %d", len(got), len(body), i)
			}
		})
	}
	wg.Wait()
}
