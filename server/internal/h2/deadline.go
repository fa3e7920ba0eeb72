package h2

import (
	"fmt"
	"os"
	"time"

	"golang.org/x/net/http2"

	"github.com/apiloom/apiloom/server/detach"
)

// A stream's read and write deadlines, which a handler sets through
// http.ResponseController as it would over HTTP/1.1: the apiserver's
// request timeout uses them to end a request whose client sends its body
// a byte at a time, or grants no window for its response.

// The errors of a stream whose deadline passed. Both wrap
// os.ErrDeadlineExceeded, as net/http's HTTP/1.1 errors do (an i/o
// timeout), so that a handler can tell them from a client that left.
var (
	errReadDeadline  = fmt.Errorf("http2: request body read deadline exceeded: %w", os.ErrDeadlineExceeded)
	errWriteDeadline = fmt.Errorf("http2: response write deadline exceeded: %w", os.ErrDeadlineExceeded)
)

// deadline is one of a stream's deadlines. Its fields are guarded by the
// connection's mu.
type deadline struct {
	timer *time.Timer // pending, or nil
	// gen changes at every set and stop, so that a timer that was already
	// firing when it was replaced does nothing.
	gen     uint64
	expired bool // it passed: later sets change nothing, as http.ResponseController documents
}

// stopLocked disarms d.
func (d *deadline) stopLocked() {
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
	d.gen++
}

// SetReadDeadline implements http.ResponseController's SetReadDeadline.
// Once t passes, a read of the request body that finds nothing buffered
// returns an error wrapping os.ErrDeadlineExceeded; what arrived before
// can still be read, and what arrives after is dropped (its window
// returned). The stream is not reset, as x/net/http2 does not reset it:
// the handler may still answer. Zero clears the deadline; once it has
// passed, setting it again changes nothing.
func (w *responseWriter) SetReadDeadline(t time.Time) error {
	w.c.setDeadline(w.st, &w.st.readDeadline, t, readDeadlinePassedLocked)
	return nil
}

// SetWriteDeadline implements http.ResponseController's SetWriteDeadline.
// Once t passes, the stream is reset (RST_STREAM(INTERNAL_ERROR), as
// x/net/http2 does) and writes, one waiting for the client's window among
// them, return an error wrapping os.ErrDeadlineExceeded. It also bounds
// what the connection still holds of the response after the handler
// returned. Zero clears the deadline; once it has passed, setting it
// again changes nothing.
func (w *responseWriter) SetWriteDeadline(t time.Time) error {
	w.c.setDeadline(w.st, &w.st.writeDeadline, t, (*conn).writeDeadlinePassedLocked)
	return nil
}

// setDeadline arms d for t. A t that is not in the future applies passed
// at once, so that reads or writes after the call fail.
func (c *conn) setDeadline(st *stream, d *deadline, t time.Time, passed func(*conn, *stream) detach.Source) {
	c.mu.Lock()
	if st.closed || d.expired {
		c.mu.Unlock()
		return
	}
	d.stopLocked()
	var src detach.Source
	if !t.IsZero() {
		if wait := time.Until(t); wait > 0 {
			gen := d.gen
			d.timer = time.AfterFunc(wait, func() { c.deadlinePassed(st, d, gen, passed) })
		} else {
			d.expired = true
			src = passed(c, st)
		}
	}
	c.mu.Unlock()
	if src != nil {
		src.Close()
	}
}

// deadlinePassed runs when d's timer fires: it applies passed unless d was
// set again, or the stream closed, since the timer was armed.
func (c *conn) deadlinePassed(st *stream, d *deadline, gen uint64, passed func(*conn, *stream) detach.Source) {
	c.mu.Lock()
	if d.gen != gen || st.closed {
		c.mu.Unlock()
		return
	}
	d.timer = nil
	d.expired = true
	src := passed(c, st)
	c.mu.Unlock()
	if src != nil {
		src.Close()
	}
}

// readDeadlinePassedLocked ends the request body's wait for more DATA.
func readDeadlinePassedLocked(_ *conn, st *stream) detach.Source {
	if st.body != nil {
		st.body.expire(errReadDeadline)
	}
	return nil
}

// writeDeadlinePassedLocked resets the stream. It returns the stream's
// Source, if any, for the caller to close once mu is released.
func (c *conn) writeDeadlinePassedLocked(st *stream) detach.Source {
	st.closeErr = errWriteDeadline
	return c.closeStreamLocked(st, http2.ErrCodeInternal)
}
