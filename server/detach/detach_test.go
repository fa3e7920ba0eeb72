package detach

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// connWriter is a connection's writer that can detach a body.
type connWriter struct {
	*httptest.ResponseRecorder
	src Source
}

func (c *connWriter) DetachBody(src Source) { c.src = src }

func (c *connWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) { return nil, nil, nil }

// wrapper is a middleware's writer that knows nothing of detaching.
type wrapper struct{ http.ResponseWriter }

func (w wrapper) Unwrap() http.ResponseWriter { return w.ResponseWriter }

type nopSource struct{ closed bool }

func (*nopSource) Append(dst []byte, _ int) ([]byte, bool) { return dst, true }
func (*nopSource) Start(func())                            {}
func (s *nopSource) Close()                                { s.closed = true }

func TestFindFollowsUnwrap(t *testing.T) {
	cw := &connWriter{ResponseRecorder: httptest.NewRecorder()}
	if d, ok := Find(wrapper{wrapper{cw}}); !ok || d != cw {
		t.Errorf("Find through two wrappers: %v %v", d, ok)
	}
	if _, ok := Find(wrapper{httptest.NewRecorder()}); ok {
		t.Error("Find found a Detacher where there is none")
	}
}

// TestObserveEndsWhenTheBodyEnds: for a handler that writes its body,
// end runs when it returns; for one that detaches, only when the
// connection closes the Source, and then exactly once.
func TestObserveEndsWhenTheBodyEnds(t *testing.T) {
	t.Run("written", func(t *testing.T) {
		ended := 0
		w, done := Observe(wrapper{httptest.NewRecorder()}, func() { ended++ })
		if _, ok := Find(w); ok {
			t.Fatal("the observer offers to detach over a writer that cannot")
		}
		_, _ = w.Write([]byte("body"))
		done()
		if ended != 1 {
			t.Fatalf("end ran %d times", ended)
		}
	})
	t.Run("detached", func(t *testing.T) {
		cw := &connWriter{ResponseRecorder: httptest.NewRecorder()}
		ended := 0
		w, done := Observe(wrapper{cw}, func() { ended++ })
		d, ok := Find(w)
		if !ok {
			t.Fatal("the observer hides the connection's Detacher")
		}
		src := &nopSource{}
		d.DetachBody(src)
		done()
		if ended != 0 || cw.src == nil {
			t.Fatalf("after the handler returned: ended %d, source handed on %v", ended, cw.src != nil)
		}
		cw.src.Close()
		if ended != 1 || !src.closed {
			t.Fatalf("after the body ended: ended %d, source closed %v", ended, src.closed)
		}
	})
	t.Run("passes Flush and Hijack through", func(t *testing.T) {
		cw := &connWriter{ResponseRecorder: httptest.NewRecorder()}
		w, _ := Observe(cw, func() {})
		w.(http.Flusher).Flush()
		if !cw.Flushed {
			t.Error("Flush did not reach the connection's writer")
		}
		if _, _, err := w.(http.Hijacker).Hijack(); err != nil {
			t.Errorf("Hijack: %v", err)
		}
	})
}
