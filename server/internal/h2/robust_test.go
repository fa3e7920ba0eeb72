package h2_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"
	"testing/synctest"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/apiloom/apiloom/server/detach"
	"github.com/apiloom/apiloom/server/internal/h2"
)

// Tests of what a hostile or broken client must not be able to do to a
// connection: make it hold memory without bound, stall it, or end it for
// every stream with one bad request.

func isHeaders(id uint32) func(http2.Frame) bool {
	return func(f http2.Frame) bool { return f.Header().Type == http2.FrameHeaders && f.Header().StreamID == id }
}

func isEndOf(id uint32) func(http2.Frame) bool {
	return func(f http2.Frame) bool {
		return f.Header().StreamID == id && f.Header().Flags.Has(http2.FlagDataEndStream) &&
			(f.Header().Type == http2.FrameData || f.Header().Type == http2.FrameHeaders)
	}
}

// sync sends a PING and returns the frames read before its ACK: the
// server has then processed everything the client sent before it.
func (rc *rawClient) sync() []http2.Frame {
	rc.t.Helper()
	data := [8]byte{'s', 'y', 'n', 'c'}
	if err := rc.fr.WritePing(false, data); err != nil {
		rc.t.Fatal(err)
	}
	var before []http2.Frame
	rc.next(func(f http2.Frame) bool {
		if p, ok := f.(*http2.PingFrame); ok && p.IsAck() && p.Data == data {
			return true
		}
		if d, ok := f.(*http2.DataFrame); ok {
			f = &copiedData{d.FrameHeader, bytes.Clone(d.Data())} // the Framer reuses its buffer
		}
		before = append(before, f)
		return false
	})
	return before
}

type copiedData struct {
	http2.FrameHeader
	data []byte
}

func (rc *rawClient) headers(id uint32, end bool, kv ...string) {
	rc.t.Helper()
	if err := rc.writeHeaders(id, end, kv...); err != nil {
		rc.t.Fatal(err)
	}
}

// writeHeaders writes a HEADERS frame of the fields kv and returns the
// write's error.
func (rc *rawClient) writeHeaders(id uint32, end bool, kv ...string) error {
	return rc.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: rc.encode(kv...), EndStream: end, EndHeaders: true})
}

// encode encodes name-value pairs as a header block, with the client's
// header compression context; the block is valid until the next call.
func (rc *rawClient) encode(kv ...string) []byte {
	rc.hbuf.Reset()
	for i := 0; i+1 < len(kv); i += 2 {
		_ = rc.enc.WriteField(hpack.HeaderField{Name: kv[i], Value: kv[i+1]})
	}
	return rc.hbuf.Bytes()
}

func onlyQueues(t *testing.T, srv *h2.Server) h2.ConnQueues {
	t.Helper()
	qs := srv.ConnQueues()
	if len(qs) != 1 {
		t.Fatalf("%d connections", len(qs))
	}
	return qs[0]
}

// TestControlFloodFromNonReadingClient: a client that sends PINGs (or
// SETTINGS, or frames that earn an RST_STREAM) but never reads makes the
// server queue an answer for each while its writer is stuck; the queue
// must be bounded, the connection ended instead (CVE-2019-9512, -9515).
func TestControlFloodFromNonReadingClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &h2.Server{OverheadBudget: -1} // the backlog's bound, not the budget's
		rc := newRawClient(t, srv, http.NotFoundHandler())
		// Never reading, the client leaves the server's writer stuck in its
		// first write (net.Pipe has no buffer).
		const pings = 200000 // 3.4 MB of PING ACKs
		var err error
		for i := 0; i < pings && err == nil; i++ {
			err = rc.fr.WritePing(false, [8]byte{byte(i)})
		}
		if err == nil {
			t.Fatalf("the server took %d PINGs from a client that reads nothing, and holds %+v", pings, onlyQueues(t, srv))
		}
		waitClosed(t, rc.done, "the flooded connection to end")
	})
}

// TestResetBlockedStreamsAreForgotten: streams waiting for the
// connection's send window and then reset by the client must not stay
// listed, or a client that never opens the connection's window holds the
// server's memory stream by stream.
func TestResetBlockedStreamsAreForgotten(t *testing.T) {
	srv := &h2.Server{}
	rc := newRawClient(t, srv, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fill" {
			_, _ = w.Write(bytes.Repeat([]byte("x"), 65535)) // the whole connection window
			return
		}
		_, _ = io.WriteString(w, "x")
	}))
	rc.get(1, "/fill")
	rc.next(isEndOf(1))
	const streams = 200
	for i := range streams {
		id := uint32(3 + 2*i)
		rc.get(id, "/")
		rc.next(isHeaders(id)) // its DATA waits for the connection's window
		if err := rc.fr.WriteRSTStream(id, http2.ErrCodeCancel); err != nil {
			t.Fatal(err)
		}
	}
	rc.sync()
	if q := onlyQueues(t, srv); q.ConnBlocked > 1 || q.Open != 0 {
		t.Fatalf("after %d blocked streams were reset the connection holds %+v", streams, q)
	}
}

// TestResetStreamsLeaveTheReadyQueue: while the writer is stuck on a
// client that does not read, streams that were queued and then reset must
// not pile up in the ready queue.
func TestResetStreamsLeaveTheReadyQueue(t *testing.T) {
	handed, returned := make(chan struct{}), make(chan struct{})
	srv := &h2.Server{}
	rc := newRawClient(t, srv, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { returned <- struct{}{} }()
		_, _ = io.WriteString(w, "x")
		w.(http.Flusher).Flush() // queued for the stuck writer
		handed <- struct{}{}
		<-r.Context().Done()
	}))
	const streams = 200
	for i := range streams {
		id := uint32(1 + 2*i)
		rc.get(id, "/")
		<-handed
		if err := rc.fr.WriteRSTStream(id, http2.ErrCodeCancel); err != nil {
			t.Fatal(err)
		}
		<-returned // the reset was processed: it ended the request's context
	}
	if q := onlyQueues(t, srv); q.Ready > 1 || q.Open != 0 {
		t.Fatalf("after %d queued streams were reset the connection holds %+v", streams, q)
	}
}

// TestPaddingIsReturnedToTheStream: the padding of a request's DATA
// frames counts against the stream's window as well as the connection's,
// so both must get it back, or a client that pads runs out of window and
// its upload stalls.
func TestPaddingIsReturnedToTheStream(t *testing.T) {
	read := make(chan struct{})
	rc := newRawClient(t, &h2.Server{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadFull(r.Body, make([]byte, 3))
		close(read)
		<-r.Context().Done()
	}))
	rc.headers(1, false, ":method", "POST", ":scheme", "https", ":authority", "x", ":path", "/")
	if err := rc.fr.WriteDataPadded(1, false, []byte("abc"), make([]byte, 100)); err != nil {
		t.Fatal(err)
	}
	<-read
	var stream, conn uint32
	for _, f := range rc.sync() {
		if wu, ok := f.(*http2.WindowUpdateFrame); ok && wu.StreamID == 1 {
			stream += wu.Increment
		} else if ok && wu.StreamID == 0 {
			conn += wu.Increment
		}
	}
	const sent = 1 + 3 + 100 // pad length, data, padding
	if stream != sent {
		t.Fatalf("the stream got %d bytes of window back, want %d", stream, sent)
	}
	if conn < sent {
		t.Fatalf("the connection got %d bytes of window back, want at least %d", conn, sent)
	}
}

// TestDataAfterMalformedHeadersResetsOnlyTheStream: a request whose
// header the Framer rejects is reset; its stream is closed, not idle, so
// the rest of its body is a stream error too, and the connection's other
// requests go on.
func TestDataAfterMalformedHeadersResetsOnlyTheStream(t *testing.T) {
	rc := newRawClient(t, &h2.Server{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	// An upper-case field name is malformed (RFC 9113 §8.2.1).
	rc.headers(1, false, ":method", "POST", ":scheme", "https", ":authority", "x", ":path", "/", "X-Bad", "v")
	if err := rc.fr.WriteData(1, true, []byte("body")); err != nil {
		t.Fatal(err)
	}
	f := rc.next(func(f http2.Frame) bool {
		rst, ok := f.(*http2.RSTStreamFrame)
		return isGoAway(f) || ok && rst.StreamID == 1 && rst.ErrCode == http2.ErrCodeStreamClosed
	})
	if ga, ok := f.(*http2.GoAwayFrame); ok {
		t.Fatalf("the connection ended (%v) for a malformed request", ga.ErrCode)
	}
	rc.get(3, "/")
	rc.next(isEndOf(3))
}

// closeCountingSource panics in Append and records its Close.
type closeCountingSource struct{ closed chan struct{} }

func (s *closeCountingSource) Start(wake func())               { wake() }
func (*closeCountingSource) Append([]byte, int) ([]byte, bool) { panic("buggy source") }
func (s *closeCountingSource) Close()                          { close(s.closed) } // twice panics

// TestPanickingSourceIsClosed: a Source whose Append panics ends its
// connection, and is still closed, once, so that it lets go of what it
// holds (a watch's registration).
func TestPanickingSourceIsClosed(t *testing.T) {
	src := &closeCountingSource{closed: make(chan struct{})}
	rc := newRawClient(t, &h2.Server{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.(detach.Detacher).DetachBody(src)
	}))
	rc.get(1, "/")
	go func() { _, _ = io.Copy(io.Discard, rc.nc) }() // the writer must get to Append
	waitClosed(t, rc.done, "the connection to end")
	select {
	case <-src.closed:
	default:
		t.Fatal("the source whose Append panicked was never closed")
	}
}

// TestResetSourceIsClosedWhileTheWriterIsStuck: the Source of a stream
// the client resets is closed at once, not when the writer next gets to
// it: the writer may be stuck for WriteTimeout on a client that does not
// read, and that client could meanwhile open and reset watches without
// bound, each holding its registration.
func TestResetSourceIsClosedWhileTheWriterIsStuck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newTestSource()
		srv := &h2.Server{}
		rc := newRawClient(t, srv, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.(detach.Detacher).DetachBody(src)
		}))
		// Never reading, the client leaves the writer stuck in its first write.
		rc.get(1, "/")
		synctest.Wait() // the connection has taken the Source, and the writer is stuck
		if q := onlyQueues(t, srv); q.Ready != 1 && src.appendCount() == 0 {
			t.Fatalf("the detached stream is neither queued nor asked: %+v", q)
		}
		if err := rc.fr.WriteRSTStream(1, http2.ErrCodeCancel); err != nil {
			t.Fatal(err)
		}
		waitClosed(t, src.closed, "the reset stream's Source to be closed")
	})
}

// greedySource appends more than it may: a bug in a Source.
type greedySource struct{ closed chan struct{} }

func (s *greedySource) Start(wake func()) { wake() }
func (s *greedySource) Append(dst []byte, limit int) ([]byte, bool) {
	return append(dst, bytes.Repeat([]byte("g"), limit+1)...), false
}
func (s *greedySource) Close() { close(s.closed) }

// TestGreedySourceResetsOnlyItsStream: a Source that appends more than its
// limit would overrun the client's window and, past 16 MiB, the frame's
// length field; its stream is reset instead, and the others go on.
func TestGreedySourceResetsOnlyItsStream(t *testing.T) {
	src := &greedySource{closed: make(chan struct{})}
	rc := newRawClient(t, &h2.Server{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/greedy" {
			w.(detach.Detacher).DetachBody(src)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	rc.get(1, "/greedy")
	f := rc.next(func(f http2.Frame) bool { return isRST(1)(f) || f.Header().Type == http2.FrameData })
	if rst, ok := f.(*http2.RSTStreamFrame); !ok || rst.ErrCode != http2.ErrCodeInternal {
		t.Fatalf("the greedy Source's stream got %v, want RST_STREAM(INTERNAL_ERROR)", f)
	}
	waitClosed(t, src.closed, "the greedy Source to be closed")
	rc.get(3, "/")
	rc.next(isEndOf(3))
}

// TestTrailersAfterEarlyResponse: a server that answers before the body
// ends resets the stream with RST_STREAM(NO_ERROR); the client's trailers
// may already be on their way, and must not end the connection
// (RFC 9113 §5.1: frames on a stream the endpoint reset are ignored).
func TestTrailersAfterEarlyResponse(t *testing.T) {
	rc := newRawClient(t, &h2.Server{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden) // without reading the body
	}))
	rc.headers(1, false, ":method", "POST", ":scheme", "https", ":authority", "x", ":path", "/")
	rc.next(isEndOf(1))
	rc.next(isRST(1))
	rc.headers(1, true, "x-trailer", "v") // sent before the client saw the RST_STREAM
	if f := rc.next(func(f http2.Frame) bool { return isGoAway(f) || isRST(1)(f) }); isGoAway(f) {
		t.Fatalf("the connection ended (%v) for trailers in flight", f.(*http2.GoAwayFrame).ErrCode)
	}
	rc.get(3, "/")
	rc.next(isEndOf(3))
}
