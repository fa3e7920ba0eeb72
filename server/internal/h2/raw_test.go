package h2_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/apiloom/apiloom/server/internal/h2"
)

// rawClient drives a connection frame by frame, for what a well-behaved
// client never does.
type rawClient struct {
	t    *testing.T
	nc   net.Conn
	fr   *http2.Framer
	done chan struct{} // closed when ServeConn returned
	hbuf bytes.Buffer
	enc  *hpack.Encoder
}

func newRawClient(t *testing.T, srv *h2.Server, h http.Handler) *rawClient {
	t.Helper()
	client, server := net.Pipe()
	rc := &rawClient{t: t, nc: client, fr: http2.NewFramer(client, client), done: make(chan struct{})}
	rc.enc = hpack.NewEncoder(&rc.hbuf)
	rc.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	go func() {
		defer close(rc.done)
		srv.ServeConn(context.Background(), server, h)
	}()
	t.Cleanup(func() {
		_ = client.Close()
		waitClosed(t, rc.done, "ServeConn to return")
	})
	// net.Pipe is synchronous, but the server reads frames whether or not
	// the client reads what the server writes.
	if _, err := client.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	if err := rc.fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	return rc
}

// next reads frames until one satisfies keep, skipping the rest.
func (rc *rawClient) next(keep func(http2.Frame) bool) http2.Frame {
	rc.t.Helper()
	_ = rc.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		f, err := rc.fr.ReadFrame()
		if err != nil {
			rc.t.Fatalf("read frame: %v", err)
		}
		if keep(f) {
			return f
		}
	}
}

func (rc *rawClient) get(id uint32, path string) {
	rc.t.Helper()
	if err := rc.writeGet(id, path); err != nil {
		rc.t.Fatal(err)
	}
}

// writeGet writes a GET's HEADERS frame and returns the write's error.
func (rc *rawClient) writeGet(id uint32, path string) error {
	return rc.writeHeaders(id, true, ":method", "GET", ":scheme", "https", ":authority", "x", ":path", path)
}

func isRST(id uint32) func(http2.Frame) bool {
	return func(f http2.Frame) bool { return f.Header().Type == http2.FrameRSTStream && f.Header().StreamID == id }
}

func isGoAway(f http2.Frame) bool { return f.Header().Type == http2.FrameGoAway }

func TestStreamsBeyondTheLimitAreRefused(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	rc := newRawClient(t, &h2.Server{MaxConcurrentStreams: 2}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	rc.get(1, "/")
	rc.get(3, "/")
	rc.get(5, "/")
	rst := rc.next(isRST(5)).(*http2.RSTStreamFrame)
	if rst.ErrCode != http2.ErrCodeRefusedStream {
		t.Fatalf("stream 5 reset with %v, want REFUSED_STREAM", rst.ErrCode)
	}
}

// TestStreamAfterTheLastEndedIsNotRefused: a client at the stream limit
// opens its next stream as soon as it sees the last one end, as h2load -m
// does; the handler that answered it has returned, and must no longer
// count against the limit.
func TestStreamAfterTheLastEndedIsNotRefused(t *testing.T) {
	rc := newRawClient(t, &h2.Server{MaxConcurrentStreams: 1}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("ok"))
	}))
	for id := uint32(1); id < 4000; id += 2 {
		rc.get(id, "/")
		if f := rc.next(func(f http2.Frame) bool { return isRST(id)(f) || isEndOf(id)(f) }); isRST(id)(f) {
			t.Fatalf("stream %d reset with %v", id, f.(*http2.RSTStreamFrame).ErrCode)
		}
	}
}

func TestPingIsAnswered(t *testing.T) {
	rc := newRawClient(t, &h2.Server{}, http.NotFoundHandler())
	data := [8]byte{1, 2, 3, 4, 5, 6, 7, 8}
	if err := rc.fr.WritePing(false, data); err != nil {
		t.Fatal(err)
	}
	f := rc.next(func(f http2.Frame) bool { return f.Header().Type == http2.FramePing }).(*http2.PingFrame)
	if !f.IsAck() || f.Data != data {
		t.Fatalf("PING answer %+v", f)
	}
}

func TestDataOnIdleStreamEndsConnection(t *testing.T) {
	rc := newRawClient(t, &h2.Server{}, http.NotFoundHandler())
	if err := rc.fr.WriteData(7, true, []byte("x")); err != nil {
		t.Fatal(err)
	}
	ga := rc.next(isGoAway).(*http2.GoAwayFrame)
	if ga.ErrCode != http2.ErrCodeProtocol {
		t.Fatalf("GOAWAY %v, want PROTOCOL_ERROR", ga.ErrCode)
	}
	waitClosed(t, rc.done, "the connection to end")
}

func TestConnectionHeaderInRequestIsMalformed(t *testing.T) {
	rc := newRawClient(t, &h2.Server{}, http.NotFoundHandler())
	rc.hbuf.Reset()
	for _, f := range [][2]string{{":method", "GET"}, {":scheme", "https"}, {":path", "/"}, {"connection", "keep-alive"}} {
		_ = rc.enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	if err := rc.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: rc.hbuf.Bytes(), EndStream: true, EndHeaders: true}); err != nil {
		t.Fatal(err)
	}
	if rst := rc.next(isRST(1)).(*http2.RSTStreamFrame); rst.ErrCode != http2.ErrCodeProtocol {
		t.Fatalf("RST %v, want PROTOCOL_ERROR", rst.ErrCode)
	}
}

// TestIdleConnectionIsClosed: a connection without a stream for
// IdleTimeout gets GOAWAY(NO_ERROR) then, a grace period later, is closed.
func TestIdleConnectionIsClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const idle = 5 * time.Second
		start := time.Now()
		rc := newRawClient(t, &h2.Server{IdleTimeout: idle}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		ga := rc.next(isGoAway).(*http2.GoAwayFrame)
		if ga.ErrCode != http2.ErrCodeNo || ga.LastStreamID != 0 || time.Since(start) != idle {
			t.Fatalf("GOAWAY %v last %d after %v, want NO_ERROR, 0, after %v", ga.ErrCode, ga.LastStreamID, time.Since(start), idle)
		}
		// The server closes after its grace period of a second.
		if _, err := io.Copy(io.Discard, rc.nc); err != nil && !errors.Is(err, io.EOF) {
			t.Fatalf("after GOAWAY: %v", err)
		}
		if waited := time.Since(start); waited != idle+time.Second {
			t.Fatalf("closed after %v, want %v", waited, idle+time.Second)
		}
		waitClosed(t, rc.done, "the connection to close")
	})
}

// TestRapidResetIsBounded: streams the client resets while their handlers
// still run count against the limit, so a client cannot start handler
// goroutines without bound by opening and resetting streams.
func TestRapidResetIsBounded(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	rc := newRawClient(t, &h2.Server{MaxConcurrentStreams: 3}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-block // ignores its context, as a slow handler may
	}))
	for id := uint32(1); id <= 5; id += 2 {
		rc.get(id, "/")
		if err := rc.fr.WriteRSTStream(id, http2.ErrCodeCancel); err != nil {
			t.Fatal(err)
		}
	}
	rc.get(7, "/")
	rst := rc.next(isRST(7)).(*http2.RSTStreamFrame)
	if rst.ErrCode != http2.ErrCodeRefusedStream {
		t.Fatalf("stream 7 reset with %v, want REFUSED_STREAM", rst.ErrCode)
	}
}

// TestNegativeWindow: a client may shrink its initial window below what a
// stream already used (RFC 9113 §6.9.2), leaving a negative window; the
// stream's END_STREAM still goes out, as an empty DATA frame.
func TestNegativeWindow(t *testing.T) {
	release := make(chan struct{})
	rc := newRawClient(t, &h2.Server{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "0123456789")
		w.(http.Flusher).Flush()
		<-release
	}))
	if err := rc.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 10}); err != nil {
		t.Fatal(err)
	}
	rc.get(1, "/")
	isData := func(f http2.Frame) bool { return f.Header().Type == http2.FrameData }
	if d := rc.next(isData).(*http2.DataFrame); string(d.Data()) != "0123456789" {
		t.Fatalf("first DATA %q", d.Data())
	}
	if err := rc.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0}); err != nil {
		t.Fatal(err)
	}
	rc.next(func(f http2.Frame) bool { // the server applied it
		sf, ok := f.(*http2.SettingsFrame)
		return ok && sf.IsAck()
	})
	close(release)
	d := rc.next(isData).(*http2.DataFrame)
	if len(d.Data()) != 0 || !d.StreamEnded() {
		t.Fatalf("last DATA: %d bytes, END_STREAM %v", len(d.Data()), d.StreamEnded())
	}
}
