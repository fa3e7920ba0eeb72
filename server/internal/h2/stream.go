package h2

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http2"

	"github.com/apiloom/apiloom/server/detach"
)

var errStreamClosed = errors.New("http2: stream closed")

// stream is one request and its response. Its first fields are
// immutable once the reader made it; the rest are guarded by the
// connection's mu.
type stream struct {
	// Immutable.
	id     uint32
	cancel context.CancelFunc // ends the request's context
	body   *requestBody       // nil when the request has none
	// drained wakes a handler waiting for the writer to take its data.
	drained sync.Cond

	// Guarded by the connection's mu.
	remoteClosed bool // the client sent END_STREAM
	closed       bool // ended: END_STREAM sent, or reset
	answered     bool // the writer has sent the response's header (calm.go)
	queued       bool // in the connection's ready queue
	prev, next   *stream
	flowBlocked  bool // has something to send but no window
	connBlocked  bool // in the connection's connBlocked list
	sendWindow   int64
	recvWindow   int64
	recvCredit   int64 // body bytes read but not yet returned to the client

	header       *responseHeader // to be written next
	data         []byte          // body the handler handed over
	endAfterData bool            // END_STREAM once data is written
	src          detach.Source   // the rest of the body, once detached
	appending    bool            // the writer is inside src.Append
	// srcPending says the Source may have bytes: it was never asked, it
	// woke the stream, or it filled the last frame it was given, since its
	// last Append.
	srcPending bool

	readDeadline, writeDeadline deadline // set through http.ResponseController
	// stalledSince is when the stream last had data to send and no
	// window to send it in, and nothing sent since; zero when it is not
	// in the connection's stalled list (see stall.go).
	stalledSince time.Time
	// closeErr is what the handler's writes return once the server ended
	// the stream for a timeout; nil means errStreamClosed.
	closeErr error
}

// writeErrLocked is the error of a write to st once it is closed.
func (st *stream) writeErrLocked() error {
	if st.closeErr != nil {
		return st.closeErr
	}
	return errStreamClosed
}

// responseHeader is a response's status and header, copied when the
// handler hands them over.
type responseHeader struct {
	status    int
	header    http.Header
	endStream bool
}

// processHeaders opens a stream for a request, or takes its trailers.
func (c *conn) processHeaders(f *http2.MetaHeadersFrame) error {
	id := f.StreamID
	if id%2 == 0 {
		return http2.ConnectionError(http2.ErrCodeProtocol) // clients use odd ids
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := c.streams[id]; st != nil {
		// Trailers: must end the stream; their fields are dropped.
		if st.remoteClosed {
			return http2.StreamError{StreamID: id, Code: http2.ErrCodeStreamClosed}
		}
		if !f.StreamEnded() {
			return http2.StreamError{StreamID: id, Code: http2.ErrCodeProtocol}
		}
		st.remoteClosed = true
		if ok, _ := st.body.deliver(nil, true); !ok {
			return http2.StreamError{StreamID: id, Code: http2.ErrCodeProtocol}
		}
		return nil
	}
	if id <= c.maxClientID {
		if c.cutShortLocked(id) {
			// Trailers on their way when the stream was reset, maybe by
			// the server answering before the body ended
			// (RST_STREAM(NO_ERROR)): not the connection's end
			// (RFC 9113 §5.1).
			return http2.StreamError{StreamID: id, Code: http2.ErrCodeStreamClosed}
		}
		return http2.ConnectionError(http2.ErrCodeStreamClosed) // HEADERS on a closed stream
	}
	c.maxClientID = id
	if f.HasPriority() && f.Priority.StreamDep == id {
		return http2.StreamError{StreamID: id, Code: http2.ErrCodeProtocol}
	}
	if c.goingAway {
		return nil // after GOAWAY: ignored, as its last-stream-id told the client
	}
	// Handlers of streams the client reset may still run; counting them
	// too bounds the goroutines a client can start by opening and
	// resetting streams in a loop (CVE-2023-44487, "rapid reset").
	if uint32(max(c.open, c.running)) >= c.srv.maxStreams() {
		return http2.StreamError{StreamID: id, Code: http2.ErrCodeRefusedStream}
	}

	handler := c.handler
	req, err := c.newRequest(f)
	switch {
	case f.Truncated:
		handler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "request header fields too large", http.StatusRequestHeaderFieldsTooLarge)
		})
		req, err = &http.Request{Method: http.MethodGet, URL: &url.URL{Path: "/"}, Header: http.Header{}, Proto: "HTTP/2.0", ProtoMajor: 2}, nil
	case errors.Is(err, errConnect):
		handler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "CONNECT is not supported", http.StatusMethodNotAllowed)
		})
		err = nil
	}
	if err != nil {
		c.log.Debug("http2: malformed request", "stream", id, "err", err)
		return http2.StreamError{StreamID: id, Code: http2.ErrCodeProtocol}
	}

	ctx, cancel := context.WithCancel(c.ctx)
	st := &stream{
		id:           id,
		cancel:       cancel,
		sendWindow:   c.peerWindow,
		recvWindow:   initialStreamWindow,
		remoteClosed: f.StreamEnded(),
	}
	st.drained.L = &c.mu
	if f.StreamEnded() {
		// No body: none is allocated, which matters for thousands of
		// watches held open.
		if req.ContentLength > 0 {
			cancel()
			return http2.StreamError{StreamID: id, Code: http2.ErrCodeProtocol} // a Content-Length and no body
		}
		req.Body = http.NoBody
	} else {
		st.body = newRequestBody(c, st, req.ContentLength)
		req.Body = st.body
	}
	req = req.WithContext(detach.WithStreamContext(ctx))
	c.streams[id] = st
	c.open++
	if c.idleTimer != nil {
		c.idleTimer.Stop()
	}

	rw := &responseWriter{c: c, st: st, header: make(http.Header), head: req.Method == http.MethodHead}
	c.running++
	c.workers.run(func() { c.runHandler(handler, rw, req) })
	return nil
}

// errConnect marks a CONNECT request, which gets 405.
var errConnect = errors.New("CONNECT")

// newRequest builds the http.Request of a HEADERS frame, rejecting what
// RFC 9113 §8.2 and §8.3 call malformed.
func (c *conn) newRequest(f *http2.MetaHeadersFrame) (*http.Request, error) {
	method, path := f.PseudoValue("method"), f.PseudoValue("path")
	scheme, authority := f.PseudoValue("scheme"), f.PseudoValue("authority")
	if f.PseudoValue("protocol") != "" {
		return nil, errors.New("extended CONNECT is not enabled")
	}
	if method == http.MethodConnect {
		if path != "" || scheme != "" || authority == "" {
			return nil, errors.New("malformed CONNECT")
		}
		return &http.Request{Method: method, URL: &url.URL{Host: authority}, Header: http.Header{}, Proto: "HTTP/2.0", ProtoMajor: 2}, errConnect
	}
	if method == "" || path == "" || scheme == "" {
		return nil, errors.New("missing pseudo-header field")
	}
	u, err := url.ParseRequestURI(path)
	if err != nil {
		return nil, err
	}
	header := make(http.Header, len(f.Fields))
	var cookies []string
	for _, hf := range f.RegularFields() {
		switch hf.Name {
		case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
			return nil, errors.New("connection-specific header field " + hf.Name)
		case "te":
			if hf.Value != "trailers" {
				return nil, errors.New("te other than trailers")
			}
		case "cookie":
			cookies = append(cookies, hf.Value)
			continue
		}
		key := http.CanonicalHeaderKey(hf.Name)
		header[key] = append(header[key], hf.Value)
	}
	if len(cookies) > 0 {
		header.Set("Cookie", strings.Join(cookies, "; "))
	}
	if authority == "" {
		authority = header.Get("Host")
	}
	contentLength := int64(-1)
	if cl := header["Content-Length"]; len(cl) > 0 {
		n, err := strconv.ParseUint(cl[0], 10, 63)
		if err != nil || len(cl) > 1 {
			return nil, errors.New("bad content-length")
		}
		contentLength = int64(n)
	} else if f.StreamEnded() {
		contentLength = 0
	}
	return &http.Request{
		Method:        method,
		URL:           u,
		Proto:         "HTTP/2.0",
		ProtoMajor:    2,
		Header:        header,
		ContentLength: contentLength,
		Host:          authority,
		RequestURI:    path,
		RemoteAddr:    c.nc.RemoteAddr().String(),
		TLS:           c.tls,
	}, nil
}

// runHandler serves one request on its own goroutine, then finishes the
// response or hands it to its Source. A panic resets the stream.
func (c *conn) runHandler(h http.Handler, rw *responseWriter, req *http.Request) {
	counted := true
	stopCounting := func() {
		c.mu.Lock()
		c.running--
		c.mu.Unlock()
		counted = false
	}
	defer func() {
		if counted {
			stopCounting()
		}
	}()
	defer func() {
		if p := recover(); p != nil {
			if p != http.ErrAbortHandler {
				c.log.Error("http2: handler panicked", "url", req.URL.String(), "panic", p, "stack", string(debug.Stack()))
			}
			c.mu.Lock()
			src := c.closeStreamLocked(rw.st, http2.ErrCodeInternal)
			c.mu.Unlock()
			if src != nil {
				src.Close()
			} else if rw.src != nil && !rw.attached {
				rw.src.Close()
			}
		}
	}()
	h.ServeHTTP(rw, req)
	// The handler has returned: it stops counting against the stream limit
	// before its response ends, or a client that opens a stream as soon as
	// it sees the last one end (h2load -m, at the limit) could find it still
	// counted and be refused.
	stopCounting()
	rw.finish()
}
