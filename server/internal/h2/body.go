package h2

import (
	"errors"
	"io"
	"sync"
)

var errBodyClosed = errors.New("http2: request body closed")

// requestBody is a request's body as it arrives in DATA frames. It holds
// at most the stream's receive window, since the client may not send
// more; what the handler reads is returned to the client as window.
//
// Lock order: the connection's mu before mu, never the other way.
type requestBody struct {
	c  *conn
	st *stream

	mu       sync.Mutex
	arrived  sync.Cond // data or an end arrived; L is &mu
	buf      []byte
	err      error // returned once buf is drained: io.EOF, or why it stopped
	declared int64 // Content-Length, or -1
	received int64
}

func newRequestBody(c *conn, st *stream, declared int64) *requestBody {
	b := &requestBody{c: c, st: st, declared: declared}
	b.arrived.L = &b.mu
	return b
}

// deliver adds data and, with end, ends the body. It reports false when
// the body disagrees with its Content-Length, a malformed request, and
// dropped when nobody will read data (the handler closed the body), so
// that the caller returns its window at once.
func (b *requestBody) deliver(data []byte, end bool) (ok, dropped bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.received += int64(len(data))
	if b.declared >= 0 && (b.received > b.declared || end && b.received != b.declared) {
		return false, false
	}
	if b.err != nil {
		return true, true
	}
	b.buf = append(b.buf, data...)
	if end {
		b.err = io.EOF
	}
	b.arrived.Broadcast()
	return true, false
}

// abort ends the body with err unless it already ended, and drops what
// the handler has not read yet. It returns how many bytes it dropped, for
// the caller to return to the connection's window: nobody reads them now,
// and a stream's window ends with it, but the connection's does not.
func (b *requestBody) abort(err error) (dropped int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	dropped = len(b.buf)
	b.buf = nil
	if b.err == nil || b.err == io.EOF && dropped > 0 {
		b.err = err
	}
	b.arrived.Broadcast()
	return dropped
}

// expire ends a body that is still arriving with err (its read deadline
// passed): what arrived can still be read, then err; what arrives later
// is dropped by deliver.
func (b *requestBody) expire(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err == nil {
		b.err = err
		b.arrived.Broadcast()
	}
}

// Read implements io.Reader for the handler.
func (b *requestBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	for len(b.buf) == 0 && b.err == nil {
		b.arrived.Wait()
	}
	if len(b.buf) == 0 {
		err := b.err
		b.mu.Unlock()
		return 0, err
	}
	n := copy(p, b.buf)
	b.buf = b.buf[n:]
	drained := len(b.buf) == 0
	if drained {
		b.buf = nil // a long-lived stream should not keep its largest burst
	}
	b.mu.Unlock()
	b.c.bodyRead(b.st, int64(n), drained)
	return n, nil
}

// Close implements io.Closer: what is buffered is discarded and returned
// to the client's window, and later data is dropped.
func (b *requestBody) Close() error {
	b.mu.Lock()
	n := len(b.buf)
	b.buf = nil
	if b.err == nil || b.err == io.EOF {
		b.err = errBodyClosed
	}
	b.mu.Unlock()
	if n > 0 {
		b.c.bodyRead(b.st, int64(n), true)
	}
	return nil
}
