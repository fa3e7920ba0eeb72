package h2_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/net/http2"

	"github.com/apiloom/apiloom/server/detach"
	"github.com/apiloom/apiloom/server/internal/h2"
)

// Tests of StreamWriteTimeout, at frame level in synctest bubbles: a
// stream with data the client grants no window for is reset after exactly
// the timeout, and one the client lets progress, however slowly, is not.

// stallTimeout is below rawClient.next's 10s read deadline.
const stallTimeout = 5 * time.Second

func isRSTOrData(id uint32) func(http2.Frame) bool {
	return func(f http2.Frame) bool {
		typ := f.Header().Type
		return f.Header().StreamID == id && (typ == http2.FrameRSTStream || typ == http2.FrameData)
	}
}

// TestStarvedStreamIsReset: a handler's write waiting for stream window
// the client never grants fails after StreamWriteTimeout, with an error
// wrapping os.ErrDeadlineExceeded, and the stream is reset with CANCEL.
func TestStarvedStreamIsReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		got := make(chan timed, 1)
		srv := &h2.Server{StreamWriteTimeout: stallTimeout}
		rc := newRawClient(t, srv, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			_, err := w.Write(make([]byte, 100<<10))
			got <- timed{err: err, after: time.Since(start)}
		}))
		rc.zeroWindow()
		rc.get(1, "/")
		// The client reads what it is sent, or the connection's writer
		// would be stuck and its WriteTimeout would end the connection.
		if rst := rc.next(isRST(1)).(*http2.RSTStreamFrame); rst.ErrCode != http2.ErrCodeCancel {
			t.Fatalf("RST_STREAM %v, want CANCEL", rst.ErrCode)
		}
		res := <-got
		if !errors.Is(res.err, os.ErrDeadlineExceeded) || res.after != stallTimeout {
			t.Fatalf("the starved write returned %v after %v; want a deadline error after %v", res.err, res.after, stallTimeout)
		}
		rc.sync()
		if q := onlyQueues(t, srv); q.Stalled != 0 || q.Open != 0 {
			t.Fatalf("after the reset the connection holds %+v", q)
		}
	})
}

// TestStarvedNewSourceIsReset: a Source detached while its stream has no
// window has never been asked whether it has bytes, and a watch's first
// events are there before it could wake anyone: it counts as waiting.
func TestStarvedNewSourceIsReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newTestSource()
		src.pending = []byte("initial events") // there from the start, without a wake
		rc := newRawClient(t, &h2.Server{StreamWriteTimeout: stallTimeout}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.(detach.Detacher).DetachBody(src)
		}))
		rc.zeroWindow()
		start := time.Now()
		rc.get(1, "/")
		if rst := rc.next(isRST(1)).(*http2.RSTStreamFrame); rst.ErrCode != http2.ErrCodeCancel || time.Since(start) != stallTimeout {
			t.Fatalf("reset with %v after %v, want CANCEL after %v", rst.ErrCode, time.Since(start), stallTimeout)
		}
		<-src.closed
	})
}

// TestSlowProgressIsNotReset: a client that grants one byte of window at
// a time, each a little sooner than StreamWriteTimeout, gets the whole
// response, however long that takes.
func TestSlowProgressIsNotReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const body = "0123456789abcdefghij"
		rc := newRawClient(t, &h2.Server{StreamWriteTimeout: stallTimeout}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, body)
		}))
		rc.zeroWindow()
		rc.get(1, "/")
		var got []byte
		var ended bool
		for len(got) < len(body) {
			time.Sleep(stallTimeout - time.Second)
			if err := rc.fr.WriteWindowUpdate(1, 1); err != nil {
				t.Fatal(err)
			}
			switch f := rc.next(isRSTOrData(1)).(type) {
			case *http2.RSTStreamFrame:
				t.Fatalf("reset (%v) after %d bytes, though each came within the timeout", f.ErrCode, len(got))
			case *http2.DataFrame:
				got = append(got, f.Data()...)
				ended = f.StreamEnded()
			}
		}
		if string(got) != body || !ended {
			t.Fatalf("body %q, ended %v", got, ended)
		}
	})
}

// TestConnectionStarvationResetsStreams: once the client withholds the
// connection's window, every stream with data waiting, whether its
// handler's or its Source's, is reset after StreamWriteTimeout and its
// Source closed; a detached stream whose Source said it has nothing to
// send is not, until it has something.
func TestConnectionStarvationResetsStreams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		full, idle := newTestSource(), newTestSource()
		srv := &h2.Server{StreamWriteTimeout: stallTimeout}
		rc := newRawClient(t, srv, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/fill":
				_, _ = w.Write(bytes.Repeat([]byte("x"), 65535)) // the whole connection window
			case "/handler":
				_, _ = io.WriteString(w, "x")
			case "/full":
				w.(detach.Detacher).DetachBody(full)
			case "/idle":
				w.(detach.Detacher).DetachBody(idle)
			}
		}))
		rc.get(1, "/idle")
		rc.next(isHeaders(1))
		<-idle.started
		synctest.Wait() // the connection has asked it, and it had nothing
		rc.get(3, "/fill")
		rc.next(isEndOf(3)) // and no WINDOW_UPDATE for the connection
		start := time.Now()
		rc.get(5, "/handler")
		rc.get(7, "/full")
		<-full.started
		full.push([]byte("y"), false)

		reset := map[uint32]bool{}
		for len(reset) < 2 {
			rst := rc.next(func(f http2.Frame) bool { return f.Header().Type == http2.FrameRSTStream }).(*http2.RSTStreamFrame)
			if rst.StreamID == 1 || rst.ErrCode != http2.ErrCodeCancel {
				t.Fatalf("stream %d reset with %v", rst.StreamID, rst.ErrCode)
			}
			reset[rst.StreamID] = true
		}
		if waited := time.Since(start); waited != stallTimeout {
			t.Fatalf("streams reset after %v, want %v", waited, stallTimeout)
		}
		<-full.closed

		// The idle stream has waited as long, but had nothing to send.
		time.Sleep(2 * stallTimeout)
		for _, f := range rc.sync() {
			if f.Header().Type == http2.FrameRSTStream {
				t.Fatalf("the stream with nothing to send was reset: %v", f)
			}
		}
		idle.push([]byte("z"), false)
		start = time.Now()
		if rst := rc.next(isRST(1)).(*http2.RSTStreamFrame); rst.ErrCode != http2.ErrCodeCancel || time.Since(start) != stallTimeout {
			t.Fatalf("once it had data: reset with %v after %v, want CANCEL after %v", rst.ErrCode, time.Since(start), stallTimeout)
		}
		<-idle.closed
		if q := onlyQueues(t, srv); q.Stalled != 0 || q.Open != 0 || q.ConnBlocked != 0 {
			t.Fatalf("after the resets the connection holds %+v", q)
		}
	})
}

// TestStreamWriteTimeoutZeroNeverResets: without a StreamWriteTimeout a
// starved stream waits for as long as its client.
func TestStreamWriteTimeoutZeroNeverResets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rc := newRawClient(t, &h2.Server{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, "x")
		}))
		rc.zeroWindow()
		rc.get(1, "/")
		rc.next(isHeaders(1)) // the writer then has nothing it may send
		time.Sleep(time.Hour)
		if err := rc.fr.WriteWindowUpdate(1, 1); err != nil {
			t.Fatal(err)
		}
		if f := rc.next(isRSTOrData(1)); f.Header().Type != http2.FrameData {
			t.Fatalf("after an hour without window: %v", f)
		}
	})
}
