package h2_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/net/http2"

	"github.com/apiloom/apiloom/server/internal/h2"
)

// Tests of what a client can do with frames it never completes, and with
// header blocks (frameguard.go, and the header list's weight in
// calm.go): CONTINUATION floods (CVE-2024-27316 family), slow headers and
// slow frames, HPACK bombs (CVE-2016-6581). In synctest bubbles, so each
// timeout is checked to the nanosecond.

const frameTimeout = 5 * time.Second // below rawClient.next's 10 s

// countingHandler counts the requests it serves and answers each.
func countingHandler(n *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.WriteHeader(http.StatusOK)
	})
}

// wantGoAwayCalm reads until the server's GOAWAY and checks its code.
func (rc *rawClient) wantGoAwayCalm() {
	rc.t.Helper()
	if ga := rc.next(isGoAway).(*http2.GoAwayFrame); ga.ErrCode != http2.ErrCodeEnhanceYourCalm {
		rc.t.Fatalf("GOAWAY %v, want ENHANCE_YOUR_CALM", ga.ErrCode)
	}
	waitClosed(rc.t, rc.done, "the connection to close")
}

// TestEmptyContinuationFlood: a header block that never ends, of empty
// CONTINUATION frames that x/net's Framer's byte count cannot see, ends
// the connection once it has more CONTINUATIONs than the largest header
// list takes, and starts no handler.
func TestEmptyContinuationFlood(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var served atomic.Int64
		rc := newRawClient(t, &h2.Server{MaxHeaderListSize: 64 << 10}, countingHandler(&served))
		block := []byte{0x82} // :method GET, and nothing else yet
		if err := rc.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block, EndStream: true}); err != nil {
			t.Fatal(err)
		}
		l := rc.readAll()
		sent := flood(t, l, 10000, func(int) error { return rc.fr.WriteContinuation(1, false, nil) })
		wantCalm(t, l, sent)
		// 64 KiB of header list takes four full frames; eight more are allowed.
		if sent > 4+8+1 || served.Load() != 0 {
			t.Fatalf("the server took %d CONTINUATIONs and served %d requests", sent, served.Load())
		}
	})
}

// TestHeaderBlockInFullFrames: the largest header list, in frames as
// large as the protocol allows, is not a flood.
func TestHeaderBlockInFullFrames(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var served atomic.Int64
		rc := newRawClient(t, &h2.Server{MaxHeaderListSize: 64 << 10}, countingHandler(&served))
		block := rc.encode(":method", "GET", ":scheme", "https", ":authority", "x", ":path", "/",
			"x-a", strings.Repeat("a", 15<<10), "x-b", strings.Repeat("b", 15<<10),
			"x-c", strings.Repeat("c", 15<<10), "x-d", strings.Repeat("d", 15<<10))
		const frame = 16 << 10
		if err := rc.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block[:frame], EndStream: true}); err != nil {
			t.Fatal(err)
		}
		for block = block[frame:]; len(block) > 0; {
			n := min(frame, len(block))
			if err := rc.fr.WriteContinuation(1, n == len(block), block[:n]); err != nil {
				t.Fatal(err)
			}
			block = block[n:]
		}
		if s := status(t, rc.next(isHeaders(1))); s != "200" {
			t.Fatalf("status %s", s)
		}
	})
}

// TestSlowHeaderBlock: a HEADERS frame whose block never ends holds the
// connection's reader; after ReadHeaderTimeout the connection ends.
func TestSlowHeaderBlock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rc := newRawClient(t, &h2.Server{ReadHeaderTimeout: frameTimeout}, http.NotFoundHandler())
		rc.sync()
		start := time.Now()
		if err := rc.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: []byte{0x82}, EndStream: true}); err != nil {
			t.Fatal(err)
		}
		// A CONTINUATION now and then does not restart the clock.
		for range 2 {
			time.Sleep(frameTimeout / 3)
			if err := rc.fr.WriteContinuation(1, false, []byte{0x86}); err != nil {
				t.Fatal(err)
			}
		}
		rc.wantGoAwayCalm()
		if waited := time.Since(start); waited != frameTimeout {
			t.Fatalf("the connection ended %v after the block began, want %v", waited, frameTimeout)
		}
	})
}

// TestSlowFrame: a frame whose payload stops coming halfway holds the
// reader as a header block does, and ends the same way.
func TestSlowFrame(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rc := newRawClient(t, &h2.Server{ReadHeaderTimeout: frameTimeout}, budgetHandler)
		rc.headers(1, false, ":method", "POST", ":scheme", "https", ":authority", "x", ":path", "/")
		rc.sync()
		start := time.Now()
		// A DATA frame of 100 bytes, of which 10 come.
		if _, err := rc.nc.Write(append([]byte{0, 0, 100, 0, 0, 0, 0, 0, 1}, make([]byte, 10)...)); err != nil {
			t.Fatal(err)
		}
		rc.wantGoAwayCalm()
		if waited := time.Since(start); waited != frameTimeout {
			t.Fatalf("the connection ended %v after the frame began, want %v", waited, frameTimeout)
		}
	})
}

// TestSlowButTimelyFrames: frames that each arrive within
// ReadHeaderTimeout, however slowly, and pauses between frames of any
// length, are not timed out: the clock runs per frame, from when the
// server first waited for the rest of it.
func TestSlowButTimelyFrames(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rc := newRawClient(t, &h2.Server{ReadHeaderTimeout: frameTimeout}, budgetHandler)
		rc.headers(1, false, ":method", "POST", ":scheme", "https", ":authority", "x", ":path", "/")
		rc.sync()
		for range 3 {
			// A DATA frame of 4 bytes, a byte a second: 4 s each, 12 s in all.
			if _, err := rc.nc.Write([]byte{0, 0, 4, 0, 0, 0, 0, 0, 1}); err != nil {
				t.Fatal(err)
			}
			for range 4 {
				time.Sleep(time.Second)
				if _, err := rc.nc.Write([]byte{'x'}); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(time.Minute) // between frames
		}
		rc.get(3, "/answer")
		if f := rc.next(func(f http2.Frame) bool { return isGoAway(f) || isEndOf(3)(f) }); isGoAway(f) {
			t.Fatalf("GOAWAY %v", f.(*http2.GoAwayFrame).ErrCode)
		}
	})
}

// TestHPACKBomb: a header block of references to one large dynamic table
// entry decodes to far more than it weighs; each such request is answered
// (431, once past MaxHeaderListSize), but the decoded weight is charged,
// so a client that keeps sending them is soon let go.
func TestHPACKBomb(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var served atomic.Int64
		srv := &h2.Server{}
		rc := newRawClient(t, srv, countingHandler(&served))
		big := strings.Repeat("b", 4000) // fits the 4 KiB table alone
		kv := []string{":method", "GET", ":scheme", "https", ":authority", "x", ":path", "/"}
		for range 12000 { // a 1-byte reference each after the first: one frame
			kv = append(kv, "x-bomb", big)
		}
		bombs := 0
		for ; bombs < 1000; bombs++ {
			id := uint32(2*bombs + 1)
			if rc.writeHeaders(id, true, kv...) != nil {
				break
			}
			f := rc.next(func(f http2.Frame) bool { return isHeaders(id)(f) || isGoAway(f) })
			if isGoAway(f) {
				if code := f.(*http2.GoAwayFrame).ErrCode; code != http2.ErrCodeEnhanceYourCalm {
					t.Fatalf("GOAWAY %v, want ENHANCE_YOUR_CALM", code)
				}
				break
			}
			if s := status(t, f); s != "431" {
				t.Fatalf("a bomb got %s, want 431", s)
			}
		}
		// Each costs a unit per 4 KiB of the 1 MiB it decoded to, less
		// the answer's refund.
		if bombs > 10000/(256-13)+1 || served.Load() != 0 {
			t.Fatalf("%d bombs decoded before the GOAWAY, %d served", bombs, served.Load())
		}
	})
}
