package apiserver

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/net/http2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Tests of withRequestTimeout in synctest bubbles, over net/http's
// HTTP/1.1 server and our HTTP/2 connection on in-memory connections:
// each deadline is checked to the nanosecond of the bubble's clock.

const (
	testTimeout = 5 * time.Second
	createPath  = "/apis/g/v1/namespaces/ns/foos"
)

// bodyReader is a handler that reads its whole body, as a create does,
// reports what the read returned, and answers 201.
func bodyReader(got chan<- blocked) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		_, err := io.ReadAll(r.Body)
		got <- blocked{err, time.Since(start)}
		if err == nil {
			w.WriteHeader(http.StatusCreated)
		}
	})
}

// TestSlowBodyTimesOutHTTP1: a body sent a byte at a time ends at the
// request timeout: the handler's read fails then and it returns, the
// client gets the 504 Timeout Status at that moment, and the connection,
// whose body is unfinished, is closed.
func TestSlowBodyTimesOutHTTP1(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		got := make(chan blocked, 1)
		c := serveHTTP1(t, withRequestTimeout(testTimeout, bodyReader(got)))
		start := time.Now()
		br := http1Request(t, c, "POST", createPath, 100, "{")
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		if after := time.Since(start); resp.StatusCode != http.StatusGatewayTimeout || after != testTimeout {
			t.Fatalf("HTTP %d after %v, want 504 after %v", resp.StatusCode, after, testTimeout)
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		checkTimeoutStatus(t, body)
		if h := <-got; !errors.Is(h.err, os.ErrDeadlineExceeded) || h.after != testTimeout {
			t.Fatalf("the handler's body read returned %v after %v", h.err, h.after)
		}
		if !resp.Close {
			t.Fatal("the 504 does not close the connection, whose context net/http cancelled")
		}
		if n, err := br.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
			t.Fatalf("after the 504: read %d bytes, %v; want the connection closed", n, err)
		}
	})
}

// TestSlowBodyTimesOutHTTP2: the same over HTTP/2; the stream, whose body
// the client never ended, is then reset with NO_ERROR and the
// connection's other streams go on.
func TestSlowBodyTimesOutHTTP2(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		got := make(chan blocked, 1)
		c := serveHTTP2(t, withRequestTimeout(testTimeout, bodyReader(got)))
		start := time.Now()
		c.request(1, "POST", createPath, 100, "{", false)
		r := c.read(1)
		if after := time.Since(start); r.status != "504" || after != testTimeout || r.reset != http2.ErrCodeNo {
			t.Fatalf("status %s after %v, reset %v; want 504 after %v, then NO_ERROR", r.status, after, r.reset, testTimeout)
		}
		checkTimeoutStatus(t, r.body)
		if h := <-got; !errors.Is(h.err, os.ErrDeadlineExceeded) || h.after != testTimeout {
			t.Fatalf("the handler's body read returned %v after %v", h.err, h.after)
		}
		c.request(3, "POST", createPath, 2, "{}", true)
		if r := c.read(3); r.status != "201" {
			t.Fatalf("the next request on the connection: %v", r)
		}
		<-got
	})
}

// TestStartedResponseIsCut: a response already begun cannot become a 504;
// at the deadline the handler's write, waiting for window the client
// does not grant, fails, and the stream is reset (HTTP/2) or the
// connection closed mid-body (HTTP/1.1), as kube-apiserver does.
func TestStartedResponseIsCut(t *testing.T) {
	t.Run("HTTP/2", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			got := make(chan blocked, 1)
			h := withRequestTimeout(testTimeout, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				start := time.Now()
				_, err := w.Write(make([]byte, 100<<10))
				got <- blocked{err, time.Since(start)}
			}))
			c := serveHTTP2(t, h, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0})
			c.request(1, "GET", createPath+"/x", -1, "", true)
			if r := c.read(1); r.status != "200" || r.reset != http2.ErrCodeInternal {
				t.Fatalf("got %v, want the 200 begun and then RST_STREAM(INTERNAL_ERROR)", r)
			}
			if h := <-got; !errors.Is(h.err, os.ErrDeadlineExceeded) || h.after != testTimeout {
				t.Fatalf("the handler's write returned %v after %v", h.err, h.after)
			}
		})
	})
	t.Run("HTTP/1.1", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := withRequestTimeout(testTimeout, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.WriteString(w, "partial")
				w.(http.Flusher).Flush()
				<-r.Context().Done()
				_, _ = io.WriteString(w, "never")
			}))
			c := serveHTTP1(t, h)
			br := http1Request(t, c, "GET", createPath+"/x", 0, "")
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			body, err := io.ReadAll(resp.Body)
			if string(body) != "partial" || !errors.Is(err, io.ErrUnexpectedEOF) || time.Since(start) != testTimeout {
				t.Fatalf("body %q, %v after %v; want the response cut at the deadline", body, err, time.Since(start))
			}
		})
	})
}

// TestTimeoutParameter: ?timeout= shortens the request timeout, never
// lengthens it (0 and larger values mean the server's), and a value that
// does not parse is kube-apiserver's 400.
func TestTimeoutParameter(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  time.Duration
	}{
		{"?timeout=1s", time.Second},
		{"?timeout=32s", testTimeout},
		{"?timeout=0", testTimeout},
		{"?timeout=-1s", testTimeout},
		{"", testTimeout},
	} {
		synctest.Test(t, func(t *testing.T) {
			var deadline time.Time
			h := withRequestTimeout(testTimeout, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				deadline, _ = r.Context().Deadline()
				<-r.Context().Done()
			}))
			start := time.Now()
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("GET", createPath+tc.query, nil))
			if deadline.Sub(start) != tc.want || time.Since(start) != tc.want || w.Code != http.StatusGatewayTimeout {
				t.Errorf("%q: deadline in %v, %d after %v; want 504 after %v", tc.query, deadline.Sub(start), w.Code, time.Since(start), tc.want)
			}
		})
	}

	called := false
	w := httptest.NewRecorder()
	withRequestTimeout(testTimeout, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called = true })).
		ServeHTTP(w, httptest.NewRequest("GET", createPath+"?timeout=abc", nil))
	s := readStatus(t, w.Body.Bytes())
	if called || w.Code != http.StatusBadRequest || s.Reason != metav1.StatusReasonBadRequest ||
		s.Message != `invalid timeout specified in the request URL - time: invalid duration "abc"` {
		t.Fatalf("?timeout=abc: handler called %v, %d %+v", called, w.Code, s)
	}
}

// TestTimeoutReachesAHandlerThatIgnoresIt: the client gets its 504 at the
// deadline even from a handler that ignores its context, whose later
// writes then fail.
func TestTimeoutReachesAHandlerThatIgnoresIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		late := make(chan error, 1)
		c := serveHTTP2(t, withRequestTimeout(testTimeout, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(3 * testTimeout)
			_, err := io.WriteString(w, "late")
			late <- err
		})))
		start := time.Now()
		c.request(1, "GET", createPath, -1, "", true)
		f, err := c.fr.ReadFrame()
		for err == nil && f.Header().Type != http2.FrameHeaders {
			f, err = c.fr.ReadFrame()
		}
		if err != nil || f.(*http2.MetaHeadersFrame).PseudoValue("status") != "504" || time.Since(start) != testTimeout {
			t.Fatalf("first response frame %v, %v after %v; want the 504's header after %v", f, err, time.Since(start), testTimeout)
		}
		if r := c.read(1); !r.ended || r.reset != 0 {
			t.Fatalf("the 504's body: %v", r)
		}
		if err := <-late; !errors.Is(err, http.ErrHandlerTimeout) {
			t.Fatalf("a write after the timeout: %v", err)
		}
	})
}

// TestErrorAfterTheDeadlineIsNotSent: a handler that answers its
// context's end with an error of its own (as storage errors are answered)
// does not race the 504: the client gets the 504.
func TestErrorAfterTheDeadlineIsNotSent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := serveHTTP2(t, withRequestTimeout(testTimeout, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
			http.Error(w, r.Context().Err().Error(), http.StatusInternalServerError)
		})))
		c.request(1, "GET", createPath, -1, "", true)
		r := c.read(1)
		if r.status != "504" {
			t.Fatalf("status %s %q, want 504", r.status, r.body)
		}
		checkTimeoutStatus(t, r.body)
	})
}

// TestWatchIsNotTimed: a watch runs past the request timeout, without a
// deadline on its context.
func TestWatchIsNotTimed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := serveHTTP2(t, withRequestTimeout(testTimeout, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, ok := r.Context().Deadline(); ok {
				t.Error("a watch's context has a deadline")
			}
			time.Sleep(3 * testTimeout)
			_, _ = io.WriteString(w, "event")
		})))
		c.request(1, "GET", createPath+"?watch=true", -1, "", true)
		if r := c.read(1); r.status != "200" || string(r.body) != "event" {
			t.Fatalf("watch: %v", r)
		}
	})
}

// TestClientLeavingIsNotATimeout: a request whose client leaves before the
// deadline gets no 504 written for it.
func TestClientLeavingIsNotATimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		w := httptest.NewRecorder()
		h := withRequestTimeout(testTimeout, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			cancel()
			<-r.Context().Done()
		}))
		h.ServeHTTP(w, httptest.NewRequestWithContext(ctx, "GET", createPath, nil))
		if w.Code != http.StatusOK || w.Body.Len() != 0 {
			t.Fatalf("got %d %q for a client that left", w.Code, w.Body)
		}
	})
}

// TestConnectionServesAfterATimeout: a request without a body that timed
// out leaves its HTTP/1.1 connection fit for the next request: no read
// deadline disturbed net/http's background read of the connection, whose
// failure would have cancelled the connection's context, and so the next
// request's. (One with a body gets Connection: close instead, see
// TestSlowBodyTimesOutHTTP1.)
func TestConnectionServesAfterATimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		first := true
		c := serveHTTP1(t, withRequestTimeout(testTimeout, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if first {
				first = false
				<-r.Context().Done()
				return
			}
			time.Sleep(testTimeout / 2)
			if err := r.Context().Err(); err != nil {
				t.Errorf("the next request's context: %v", err)
			}
			_, _ = io.WriteString(w, "ok")
		})))
		br := http1Request(t, c, "GET", createPath, 0, "")
		for i, want := range []int{http.StatusGatewayTimeout, http.StatusOK} {
			if i > 0 {
				http1Request(t, c, "GET", createPath+"/x", 0, "")
			}
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("want %d: %v", want, err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			if resp.StatusCode != want || resp.Close {
				t.Fatalf("HTTP %d, Connection: close %v; want %d keeping the connection", resp.StatusCode, resp.Close, want)
			}
		}
	})
}

// TestLongRunning: watches and pprof profiles are not timed; everything
// else is.
func TestLongRunning(t *testing.T) {
	for url, want := range map[string]bool{
		"/apis/g/v1/foos?watch=true":                true,
		"/apis/g/v1/namespaces/ns/foos/x?watch=1":   true,
		"/debug/pprof/profile?seconds=120":          true,
		"/apis/g/v1/foos":                           false,
		"/apis/g/v1?watch=true":                     false,
		"/readyz":                                   false,
		"/apis/g/v1/namespaces/ns/foos?watch=false": false,
	} {
		if got := longRunning(httptest.NewRequest("GET", url, nil)); got != want {
			t.Errorf("%s: long-running %v, want %v", url, got, want)
		}
	}
}

// TestTimedOutBodyRequestClosesHTTP1Connection: a request with a body,
// read in full, that times out in its handler gets its 504 with
// Connection: close: the read deadline that would have ended a body read
// failed net/http's background read, which cancels the connection's
// context.
func TestTimedOutBodyRequestClosesHTTP1Connection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := serveHTTP1(t, withRequestTimeout(testTimeout, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.ReadAll(r.Body)
			<-r.Context().Done()
		})))
		br := http1Request(t, c, "POST", createPath, 2, "{}")
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != http.StatusGatewayTimeout || !resp.Close {
			t.Fatalf("HTTP %d, Connection: close %v; want 504 closing the connection", resp.StatusCode, resp.Close)
		}
		if n, err := br.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
			t.Fatalf("after the 504: read %d bytes, %v; want the connection closed", n, err)
		}
	})
}
