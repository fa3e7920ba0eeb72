package h2

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"time"
)

// The connection's reader can read nothing else while a frame, or a
// header block (a HEADERS frame and its CONTINUATIONs, which RFC 9113
// §6.10 forbids to interleave with any other frame), is incomplete. A
// client that never completes one would hold the connection, and every
// stream on it, for good: the "slow headers" of HTTP/1.1, and the
// CONTINUATION flood (CVE-2024-27316 and its family) when the block
// never ends. x/net's Framer bounds the bytes of a header block (it ends
// the connection once a block's fragments pass twice what the header
// list may still take) but not its frames, which may be empty, nor its
// time. The frameGuard bounds both, watching the frame headers go by on
// their way from the connection's buffered reader to the Framer.

var (
	// errSlowFrame ends a connection whose client took longer than
	// ReadHeaderTimeout to complete a frame or header block.
	errSlowFrame = fmt.Errorf("http2: the client did not complete a frame or header block in time: %w", os.ErrDeadlineExceeded)
	// errContinuationFlood ends a connection whose client sent more
	// CONTINUATION frames in one header block than the largest header
	// list takes.
	errContinuationFlood = errors.New("http2: too many CONTINUATION frames in a header block")
)

// frameGuard is the io.Reader the Framer reads from. It is used by the
// connection's reader goroutine only.
type frameGuard struct {
	br      *bufio.Reader
	nc      net.Conn
	timeout time.Duration // <= 0: none
	// maxContinuations is how many CONTINUATIONs one header block may
	// have: as many as the largest header list takes in full frames, and
	// a few more.
	maxContinuations int

	hdr     [frameHeaderLen]byte
	hdrLen  int  // bytes of the current frame header seen
	payload int  // bytes of the current frame's payload still to come
	inBlock bool // a header block is open: END_HEADERS not seen yet
	conts   int  // CONTINUATIONs in the open block
	// unit counts the frames and header blocks begun; deadlineUnit is the
	// one the connection's read deadline was set for, 0 for none.
	unit, deadlineUnit uint64
	err                error // once set, every Read returns it
}

func newFrameGuard(br *bufio.Reader, nc net.Conn, timeout time.Duration, maxHeaderListSize uint32) *frameGuard {
	return &frameGuard{br: br, nc: nc, timeout: timeout, maxContinuations: int(maxHeaderListSize/maxReadFrame) + 8}
}

// midUnit reports whether a frame or header block has begun and is not
// complete.
func (g *frameGuard) midUnit() bool { return g.hdrLen > 0 || g.payload > 0 || g.inBlock }

// Read reads for the Framer. Before it must wait for the network in the
// middle of a frame or header block, it sets the connection's read
// deadline to ReadHeaderTimeout from then, once per frame or block; it
// clears it before waiting between them. Reads served from the buffer
// touch no deadline, so a client that sends whole frames costs nothing.
func (g *frameGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if g.timeout > 0 && g.br.Buffered() == 0 {
		switch mid := g.midUnit(); {
		case mid && g.deadlineUnit != g.unit:
			_ = g.nc.SetReadDeadline(time.Now().Add(g.timeout))
			g.deadlineUnit = g.unit
		case !mid && g.deadlineUnit != 0:
			_ = g.nc.SetReadDeadline(time.Time{})
			g.deadlineUnit = 0
		}
	}
	n, err := g.br.Read(p)
	if err != nil && g.deadlineUnit == g.unit && g.midUnit() && errors.Is(err, os.ErrDeadlineExceeded) {
		g.err = errSlowFrame
		return n, g.err
	}
	if serr := g.scan(p[:n]); serr != nil {
		g.err = serr
		return 0, serr
	}
	return n, err
}

// scan follows the frame headers in b, the next bytes of the stream.
func (g *frameGuard) scan(b []byte) error {
	for len(b) > 0 {
		if g.payload > 0 {
			k := min(len(b), g.payload)
			g.payload -= k
			b = b[k:]
			continue
		}
		if g.hdrLen == 0 && !g.inBlock {
			g.unit++ // a new frame, not inside a header block
		}
		k := copy(g.hdr[g.hdrLen:], b)
		g.hdrLen += k
		b = b[k:]
		if g.hdrLen < frameHeaderLen {
			continue
		}
		g.hdrLen = 0
		g.payload = int(g.hdr[0])<<16 | int(g.hdr[1])<<8 | int(g.hdr[2])
		typ, endHeaders := g.hdr[3], g.hdr[4]&flagEndHeaders != 0
		switch {
		case typ == frameHeaders || typ == framePushPromise:
			g.inBlock, g.conts = !endHeaders, 0
		case typ == frameContinuation && g.inBlock:
			if g.conts++; g.conts > g.maxContinuations {
				return errContinuationFlood
			}
			g.inBlock = !endHeaders
		}
	}
	return nil
}
