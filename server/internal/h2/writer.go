package h2

import (
	"bytes"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http/httpguts"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// flushSize is how much the writer gathers before writing while streams
// are still waiting: large writes when behind, an immediate write (of
// whatever there is) when it has caught up.
const flushSize = 64 << 10

// maxDataFrame bounds a DATA frame whatever the client accepts (Go's
// client accepts 1 MiB): a stream gets at most this much per turn, so one
// watch catching up does not hold up the others, and the gathering buffer
// stays near flushSize.
const maxDataFrame = 16 << 10

// writeBufs keeps the writers' gathering buffers between bursts: a
// connection holds one only while it has frames to write, so thousands of
// mostly idle client connections do not hold 80 KiB each.
var writeBufs = sync.Pool{New: func() any {
	b := make([]byte, 0, flushSize+maxReadFrame)
	return &b
}}

// writer is the connection's writer goroutine's state: the frames being
// gathered and the header compression context, both its own.
type writer struct {
	c    *conn
	buf  []byte
	hbuf bytes.Buffer
	enc  *hpack.Encoder
}

// writeLoop is the connection's only writer. It takes control frames
// first, then one frame per ready stream in turn, and writes when it has
// gathered flushSize or has nothing more to gather.
func (c *conn) writeLoop() {
	w := &writer{c: c}
	w.enc = hpack.NewEncoder(&w.hbuf)
	w.takeBuf()
	defer w.releaseBuf()
	w.buf = appendSettings(w.buf,
		http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: c.srv.maxStreams()},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: initialStreamWindow},
		http2.Setting{ID: http2.SettingMaxHeaderListSize, Val: c.srv.maxHeaderListSize()},
	)
	w.buf = appendWindowUpdate(w.buf, 0, connWindow-defaultWindow)

	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		w.takeBuf()
		if len(c.toClose) > 0 {
			sources := c.toClose
			c.toClose = nil
			c.unlocked(func() {
				for _, src := range sources {
					src.Close()
				}
			})
		}
		if len(c.control) > 0 {
			w.buf = append(w.buf, c.control...)
			c.control = c.control[:0]
		}
		if c.tableChange {
			w.enc.SetMaxDynamicTableSizeLimit(c.tableSize)
			c.tableChange = false
		}
		st := c.popReadyLocked()
		if st != nil {
			w.stream(st)
		}
		if len(w.buf) >= flushSize || st == nil && len(w.buf) > 0 {
			if !w.flush() {
				return
			}
			continue
		}
		if st == nil && len(c.toClose) == 0 && len(c.control) == 0 {
			if c.closing {
				return
			}
			w.releaseBuf()
			c.work.Wait()
		}
	}
}

// takeBuf gives the writer a gathering buffer if it has none.
func (w *writer) takeBuf() {
	if w.buf == nil {
		w.buf = (*writeBufs.Get().(*[]byte))[:0]
	}
}

// releaseBuf returns the (empty) gathering buffer to the pool; one that a
// huge header block grew is left to the garbage collector.
func (w *writer) releaseBuf() {
	if w.buf != nil && cap(w.buf) <= 2*(flushSize+maxReadFrame) {
		b := w.buf[:0]
		writeBufs.Put(&b)
	}
	w.buf = nil
}

// unlocked runs f with mu released and takes it back even if f panics,
// so that writeLoop's deferred Unlock stays balanced and its recover (in
// serve) can end the connection instead of the process.
func (c *conn) unlocked(f func()) {
	c.mu.Unlock()
	defer c.mu.Lock()
	f()
}

// flush writes what was gathered, with mu released. A failed write ends
// the connection.
func (w *writer) flush() bool {
	c := w.c
	var err error
	c.unlocked(func() {
		_ = c.nc.SetWriteDeadline(time.Now().Add(c.srv.writeTimeout()))
		_, err = c.nc.Write(w.buf)
	})
	w.buf = w.buf[:0]
	if err != nil {
		c.closing = true
		_ = c.nc.Close() // the reader stops too
		return false
	}
	return true
}

// stream appends st's next frames: its header if due, then one DATA frame
// of what the handler handed over or of what its Source has. mu is held,
// and released around Append.
func (w *writer) stream(st *stream) {
	c := w.c
	if st.closed {
		return
	}
	if h := st.header; h != nil {
		st.header = nil
		st.answered = true
		c.refundLocked(refundAnswered)
		w.buf = appendHeaderBlock(w.buf, st.id, w.encodeHeader(h), h.endStream, c.peerFrame)
		if h.endStream {
			c.endStreamLocked(st)
			return
		}
	}
	allow := min(c.sendWindow, st.sendWindow, int64(min(c.peerFrame, maxDataFrame)))
	if len(st.data) > 0 || (st.endAfterData && st.src == nil) {
		if allow <= 0 && len(st.data) > 0 {
			c.blockLocked(st, true)
			return
		}
		n := int(max(0, min(int64(len(st.data)), allow))) // a window can be negative
		end := st.endAfterData && n == len(st.data)
		flags := byte(0)
		if end {
			flags = flagEndStream
		}
		w.buf = appendFrameHeader(w.buf, n, frameData, flags, st.id)
		w.buf = append(w.buf, st.data[:n]...)
		st.data = st.data[n:]
		if len(st.data) == 0 {
			st.data = nil
		}
		c.sendWindow -= int64(n)
		st.sendWindow -= int64(n)
		c.carriedLocked(n)
		c.progressLocked(st)
		st.drained.Broadcast()
		switch {
		case end:
			c.endStreamLocked(st)
		case len(st.data) > 0 || st.src != nil || st.endAfterData:
			c.readyLocked(st)
		}
		return
	}
	if st.src == nil {
		return
	}
	if allow <= 0 {
		c.blockLocked(st, st.srcPending)
		return
	}
	w.appendSource(st, int(allow))
}

// appendSource appends one DATA frame of what st's Source has now, built
// in place: the header first, the Source's bytes after it.
func (w *writer) appendSource(st *stream, allow int) {
	c := w.c
	src := st.src
	st.appending = true
	start := len(w.buf)
	var end bool
	defer func() {
		if st.appending {
			// Append panicked, which ends the connection: the Source is
			// still closed, by teardown, once.
			st.appending = false
			w.buf = w.buf[:start]
			if st.closed { // teardown has passed it by
				st.src = nil
				c.toClose = append(c.toClose, src)
			}
		}
	}()
	st.srcPending = false // a wake during Append sets it again
	c.unlocked(func() {
		w.buf = appendFrameHeader(w.buf, 0, frameData, 0, st.id)
		w.buf, end = src.Append(w.buf, allow)
	})
	n := len(w.buf) - start - frameHeaderLen
	st.appending = false
	if st.closed {
		// Reset while appending: the frame is dropped (its length is not
		// even written yet), and the Source is ours to close.
		w.buf = w.buf[:start]
		st.src = nil
		c.unlocked(src.Close)
		return
	}
	c.progressLocked(st) // it sent, or had nothing to send: either way it does not wait for window
	if n == 0 && !end {
		w.buf = w.buf[:start] // nothing yet: the Source wakes the stream
		return
	}
	if n > allow {
		// A bug in the Source: its bytes would overrun the client's
		// window and, past 16 MiB, the frame's length. Its stream is
		// reset; the connection's other streams go on.
		c.log.Error("http2: a body source appended more than its limit", "stream", st.id, "limit", allow, "appended", n)
		w.buf = w.buf[:start]
		if src := c.closeStreamLocked(st, http2.ErrCodeInternal); src != nil {
			c.toClose = append(c.toClose, src)
		}
		return
	}
	putFrameLength(w.buf[start:], n)
	c.sendWindow -= int64(n)
	st.sendWindow -= int64(n)
	c.carriedLocked(n)
	if end {
		w.buf[start+4] |= flagEndStream
		c.endStreamLocked(st)
		return
	}
	if n == allow {
		st.srcPending = true // it may have more
		c.readyLocked(st)
	}
}

// endStreamLocked closes st once its END_STREAM is gathered. A client
// still sending a body is told to stop with RST_STREAM(NO_ERROR).
func (c *conn) endStreamLocked(st *stream) {
	code := noReset
	if !st.remoteClosed {
		code = http2.ErrCodeNo
	}
	if src := c.closeStreamLocked(st, code); src != nil {
		c.toClose = append(c.toClose, src)
	}
}

// encodeHeader encodes a response header block with the connection's
// header compression context.
func (w *writer) encodeHeader(h *responseHeader) []byte {
	w.hbuf.Reset()
	_ = w.enc.WriteField(hpack.HeaderField{Name: ":status", Value: strconv.Itoa(h.status)})
	for k, vv := range h.header {
		name := strings.ToLower(k)
		if !httpguts.ValidHeaderFieldName(k) || isConnectionSpecific(name) {
			continue
		}
		for _, v := range vv {
			if httpguts.ValidHeaderFieldValue(v) {
				_ = w.enc.WriteField(hpack.HeaderField{Name: name, Value: v})
			}
		}
	}
	return w.hbuf.Bytes()
}

// isConnectionSpecific reports whether an HTTP/1 header has no place in
// HTTP/2 (RFC 9113 §8.2.2).
func isConnectionSpecific(name string) bool {
	switch name {
	case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
		return true
	}
	return false
}
