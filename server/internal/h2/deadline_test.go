package h2_test

import (
	"errors"
	"io"
	"net/http"
	"os"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/net/http2"

	"github.com/apiloom/apiloom/server/internal/h2"
)

// Tests of the read and write deadlines a handler sets through
// http.ResponseController, run in synctest bubbles: time is the bubble's,
// so each deadline is checked to the nanosecond, not within a margin.

// timed is what a handler saw of a blocking call: its error and how long
// it blocked.
type timed struct {
	read  string
	err   error
	after time.Duration
}

func postHeaders(rc *rawClient, id uint32, contentLength string) {
	rc.headers(id, false, ":method", "POST", ":scheme", "https", ":authority", "x", ":path", "/", "content-length", contentLength)
}

func status(t *testing.T, f http2.Frame) string {
	t.Helper()
	return f.(*http2.MetaHeadersFrame).PseudoValue("status")
}

// TestReadDeadlineEndsABodyWait: a handler whose client sends one byte of
// its body and then nothing gets, at its read deadline, what arrived and
// then an error wrapping os.ErrDeadlineExceeded; clearing the deadline
// afterwards does not revive the body. Its answer still goes out, and the
// stream is then reset with NO_ERROR, as the body never ended.
func TestReadDeadlineEndsABodyWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		got := make(chan timed, 1)
		rc := newRawClient(t, &h2.Server{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			rctl := http.NewResponseController(w)
			if err := rctl.SetReadDeadline(start.Add(time.Second)); err != nil {
				t.Errorf("SetReadDeadline: %v", err)
			}
			b, err := io.ReadAll(r.Body)
			got <- timed{string(b), err, time.Since(start)}
			_ = rctl.SetReadDeadline(time.Time{})
			if n, err := r.Body.Read(make([]byte, 1)); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Errorf("a read after clearing the passed deadline: %d bytes, %v", n, err)
			}
			w.WriteHeader(http.StatusGatewayTimeout)
		}))
		postHeaders(rc, 1, "100")
		if err := rc.fr.WriteData(1, false, []byte("{")); err != nil {
			t.Fatal(err)
		}
		res := <-got
		if res.read != "{" || !errors.Is(res.err, os.ErrDeadlineExceeded) || res.after != time.Second {
			t.Fatalf("the body read returned %q, %v after %v; want \"{\", a deadline error, after 1s", res.read, res.err, res.after)
		}
		if s := status(t, rc.next(isHeaders(1))); s != "504" {
			t.Fatalf("status %s, want the handler's 504", s)
		}
		if rst := rc.next(isRST(1)).(*http2.RSTStreamFrame); rst.ErrCode != http2.ErrCodeNo {
			t.Fatalf("RST_STREAM %v, want NO_ERROR", rst.ErrCode)
		}
	})
}

// TestWriteDeadlineEndsABlockedWrite: a Write waiting for window the
// client never grants fails at the write deadline with an error wrapping
// os.ErrDeadlineExceeded, and the client sees RST_STREAM(INTERNAL_ERROR).
func TestWriteDeadlineEndsABlockedWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		got := make(chan timed, 1)
		rc := newRawClient(t, &h2.Server{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			if err := http.NewResponseController(w).SetWriteDeadline(start.Add(time.Second)); err != nil {
				t.Errorf("SetWriteDeadline: %v", err)
			}
			_, err := w.Write(make([]byte, 100<<10))
			got <- timed{err: err, after: time.Since(start)}
		}))
		rc.zeroWindow()
		rc.get(1, "/")
		res := <-got
		if !errors.Is(res.err, os.ErrDeadlineExceeded) || res.after != time.Second {
			t.Fatalf("the write returned %v after %v; want a deadline error after 1s", res.err, res.after)
		}
		if rst := rc.next(isRST(1)).(*http2.RSTStreamFrame); rst.ErrCode != http2.ErrCodeInternal {
			t.Fatalf("RST_STREAM %v, want INTERNAL_ERROR", rst.ErrCode)
		}
	})
}

// TestPastWriteDeadlineFailsAtOnce: a deadline set in the past resets the
// stream before SetWriteDeadline returns, so the next write fails without
// waiting, and clearing the deadline then changes nothing.
func TestPastWriteDeadlineFailsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		got := make(chan error, 1)
		rc := newRawClient(t, &h2.Server{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rctl := http.NewResponseController(w)
			_ = rctl.SetWriteDeadline(time.Now().Add(-time.Nanosecond))
			_ = rctl.SetWriteDeadline(time.Time{})
			_, err := w.Write(make([]byte, 32<<10)) // beyond the buffered hand-over
			got <- err
		}))
		rc.get(1, "/")
		if err := <-got; !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("a write after a past deadline: %v", err)
		}
		if rst := rc.next(isRST(1)).(*http2.RSTStreamFrame); rst.ErrCode != http2.ErrCodeInternal {
			t.Fatalf("RST_STREAM %v, want INTERNAL_ERROR", rst.ErrCode)
		}
	})
}

// TestDeadlinesEndWithTheStream: deadlines of a stream that ended in time
// leave no timer behind and reset nothing when their time comes.
func TestDeadlinesEndWithTheStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		writers := make(chan http.ResponseWriter, 1)
		rc := newRawClient(t, &h2.Server{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rctl := http.NewResponseController(w)
			_ = rctl.SetReadDeadline(time.Now().Add(time.Second))
			_ = rctl.SetWriteDeadline(time.Now().Add(time.Second))
			_, _ = io.Copy(io.Discard, r.Body)
			_, _ = io.WriteString(w, "ok")
			writers <- w
		}))
		postHeaders(rc, 1, "2")
		if err := rc.fr.WriteData(1, true, []byte("{}")); err != nil {
			t.Fatal(err)
		}
		rc.next(isEndOf(1))
		w := <-writers
		synctest.Wait() // the handler's goroutine has finished the response
		if read, write := h2.DeadlinesArmed(w); read || write {
			t.Fatalf("after the stream ended: read deadline armed %v, write deadline armed %v", read, write)
		}
		time.Sleep(2 * time.Second)
		for _, f := range rc.sync() {
			if f.Header().Type == http2.FrameRSTStream {
				t.Fatalf("a deadline of an ended stream reset it: %v", f)
			}
		}
	})
}

// zeroWindow sets the client's initial stream window to zero and waits
// until the server applied it: no stream can then send DATA until the
// client grants window.
func (rc *rawClient) zeroWindow() {
	rc.t.Helper()
	if err := rc.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0}); err != nil {
		rc.t.Fatal(err)
	}
	rc.next(func(f http2.Frame) bool {
		sf, ok := f.(*http2.SettingsFrame)
		return ok && sf.IsAck()
	})
}
