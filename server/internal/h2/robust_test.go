package h2_test

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

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
	rc.hbuf.Reset()
	for i := 0; i+1 < len(kv); i += 2 {
		_ = rc.enc.WriteField(hpack.HeaderField{Name: kv[i], Value: kv[i+1]})
	}
	if err := rc.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: rc.hbuf.Bytes(), EndStream: end, EndHeaders: true}); err != nil {
		rc.t.Fatal(err)
	}
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
	srv := &h2.Server{}
	rc := newRawClient(t, srv, http.NotFoundHandler())
	// Never reading, the client leaves the server's writer stuck in its
	// first write (net.Pipe has no buffer).
	_ = rc.nc.SetWriteDeadline(time.Now().Add(30 * time.Second))
	const pings = 200000 // 3.4 MB of PING ACKs
	var err error
	for i := 0; i < pings && err == nil; i++ {
		err = rc.fr.WritePing(false, [8]byte{byte(i)})
	}
	if err == nil {
		t.Fatalf("the server took %d PINGs from a client that reads nothing, and holds %+v", pings, onlyQueues(t, srv))
	}
	waitClosed(t, rc.done, "the flooded connection to end")
}
