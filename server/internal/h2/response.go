package h2

import (
	"net/http"
	"strconv"
	"time"

	"github.com/apiloom/apiloom/server/detach"
)

// handOverSize is how much body a handler buffers before handing it to the
// connection. A stream's body waits in at most two such buffers (each
// under twice this): the one its handler fills and the one the writer is
// sending from. They swap instead of being copied: a LIST written item by
// item allocated and copied each 16 KiB again, and the garbage collector's
// share of the server's CPU serving it was 23% (profile of a
// 10,000-object LIST).
const handOverSize = 16 << 10

// responseWriter is the http.ResponseWriter of one stream. It is used by
// the stream's handler goroutine only; what it hands to the connection
// goes under the connection's mu.
type responseWriter struct {
	c  *conn
	st *stream

	header      http.Header
	status      int           // once WriteHeader was called
	head        bool          // a HEAD request: no body is sent
	sentHeader  bool          // the header went to the connection
	handedOver  bool          // some body went to the connection
	buf         []byte        // body not yet handed over
	spare       []byte        // the buffer handed over last; the handler's again once st.data is empty
	src         detach.Source // set by DetachBody
	attached    bool          // src went to the connection
	contentSize int64         // bytes written through Write
}

var (
	_ http.ResponseWriter = (*responseWriter)(nil)
	_ http.Flusher        = (*responseWriter)(nil)
	_ detach.Detacher     = (*responseWriter)(nil)
	_ interface {
		SetReadDeadline(time.Time) error
		SetWriteDeadline(time.Time) error
	} = (*responseWriter)(nil)
)

func (w *responseWriter) Header() http.Header { return w.header }

// WriteHeader fixes the status; informational codes are not sent.
func (w *responseWriter) WriteHeader(code int) {
	if w.status != 0 || code < 200 {
		return
	}
	w.status = code
}

func (w *responseWriter) Write(p []byte) (int, error) {
	if w.src != nil {
		return 0, errStreamClosed
	}
	w.WriteHeader(http.StatusOK)
	if !bodyAllowed(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	w.contentSize += int64(len(p))
	if w.head {
		return len(p), nil
	}
	if len(p) >= handOverSize {
		if err := w.lend(p); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	w.buf = append(w.buf, p...)
	if len(w.buf) >= handOverSize {
		if err := w.handOver(false); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// lend gives the connection what is buffered and then p itself, without
// copying p, and returns once the writer has taken all of p: a LIST of
// thousands of objects is one large Write, and copying it through a
// buffer cost as much as writing it.
func (w *responseWriter) lend(p []byte) error {
	if _, ok := w.header["Content-Type"]; !ok && !w.sentHeader && bodyAllowed(w.status) {
		sample := append(w.buf[:len(w.buf):len(w.buf)], p[:min(len(p), 512)]...)
		w.header.Set("Content-Type", http.DetectContentType(sample))
	}
	if err := w.handOver(false); err != nil {
		return err
	}
	c, st := w.c, w.st
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(st.data) > 0 && !st.closed {
		st.drained.Wait() // what was handed over before p goes first
	}
	if st.closed {
		return st.writeErrLocked()
	}
	st.data = p
	c.readyLocked(st)
	for len(st.data) > 0 && !st.closed {
		st.drained.Wait()
	}
	st.data = nil // p is the caller's again
	if st.closed {
		return st.writeErrLocked()
	}
	return nil
}

// Flush sends the header and what was written so far.
func (w *responseWriter) Flush() { _ = w.FlushError() }

// FlushError is Flush for http.ResponseController.
func (w *responseWriter) FlushError() error {
	if w.src != nil {
		return errStreamClosed
	}
	w.WriteHeader(http.StatusOK)
	return w.handOver(false)
}

// DetachBody implements Detacher.
func (w *responseWriter) DetachBody(src detach.Source) {
	if w.src == nil {
		w.src = src
	}
}

// finish completes the response after the handler returned: the rest of
// the body, with a Content-Length when all of it is known, or the Source.
func (w *responseWriter) finish() {
	w.WriteHeader(http.StatusOK)
	if w.src != nil && (w.head || !bodyAllowed(w.status)) {
		// No body may follow this header (RFC 9110 §9.3.2, §15.3.5,
		// §15.4.5): the Source is let go unused, and since its length is
		// unknown, no Content-Length is sent.
		src := w.src
		w.src = nil // closed here, not again if Close panics
		src.Close()
		_ = w.handOver(true)
		w.st.cancel()
		return
	}
	if w.src != nil {
		w.attach()
		return
	}
	if !w.sentHeader && !w.handedOver && bodyAllowed(w.status) && w.header.Get("Content-Length") == "" {
		w.header.Set("Content-Length", strconv.FormatInt(w.contentSize, 10))
	}
	_ = w.handOver(true)
	w.st.cancel() // as net/http: the request's context ends with the handler
}

// handOver gives the header (first time) and the buffered body to the
// connection, ending the stream if end. The body waits first for the
// writer to have taken what was handed over before, whose buffer then
// becomes the handler's next one.
func (w *responseWriter) handOver(end bool) error {
	c, st := w.c, w.st
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(w.buf) > 0 && len(st.data) > 0 && !st.closed {
		st.drained.Wait()
	}
	if st.closed {
		w.buf = w.buf[:0]
		return st.writeErrLocked()
	}
	if !w.sentHeader {
		w.sentHeader = true
		st.header = w.headerToSend(end && len(w.buf) == 0)
	}
	if len(w.buf) > 0 {
		w.handedOver = true
		// The writer copied st.data out under mu, so the buffer it came
		// from is free: the two swap.
		st.data, w.buf, w.spare = w.buf, w.spare[:0], w.buf
	}
	if end && !st.header.endStreamPending() {
		st.endAfterData = true
	}
	c.readyLocked(st)
	return nil
}

// attach hands the stream to its Source: the header and anything written
// before DetachBody go first. The request's context lives on until the
// stream ends.
func (w *responseWriter) attach() {
	c, st := w.c, w.st
	w.src.Start(func() { c.wake(st) })
	c.mu.Lock()
	if st.closed {
		c.mu.Unlock()
		w.src.Close()
		return
	}
	w.attached = true
	if !w.sentHeader {
		w.sentHeader = true
		st.header = w.headerToSend(false)
	}
	st.data = append(st.data, w.buf...)
	w.buf = nil
	st.src = w.src
	if c.ctx.Err() != nil {
		// wakeSources has run, or runs once mu is free, but the stream's
		// context may still be ending with the connection's (see there).
		st.cancel()
	}
	st.srcPending = true // not asked yet: it may have bytes (a watch's initial events)
	c.readyLocked(st)
	c.mu.Unlock()
}

// headerToSend copies the header for the writer, adding Date and, for a
// body with none, a sniffed Content-Type, as net/http does.
func (w *responseWriter) headerToSend(endStream bool) *responseHeader {
	h := w.header.Clone()
	if h == nil {
		h = make(http.Header)
	}
	if _, ok := h["Date"]; !ok {
		h.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	}
	if _, ok := h["Content-Type"]; !ok && len(w.buf) > 0 && bodyAllowed(w.status) {
		h.Set("Content-Type", http.DetectContentType(w.buf))
	}
	return &responseHeader{status: w.status, header: h, endStream: endStream}
}

// endStreamPending reports whether the header, not yet written, ends the
// stream itself.
func (h *responseHeader) endStreamPending() bool { return h != nil && h.endStream }

// bodyAllowed reports whether a response with status may have a body.
func bodyAllowed(status int) bool {
	return status != http.StatusNoContent && status != http.StatusNotModified
}
