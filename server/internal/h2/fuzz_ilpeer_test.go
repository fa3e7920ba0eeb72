package h2_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sort"
	"sync"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// The client side of FuzzConnInterleaved: it writes the program's frames
// and reads the server's, checking each against what the client allowed
// (flow-control windows, frame size, stream states).

// ilPeer is the fuzz client. The program's goroutine writes; run reads.
type ilPeer struct {
	nc   net.Conn
	wfr  *http2.Framer // writes, by the program only
	rfr  *http2.Framer // reads, by run only
	hbuf bytes.Buffer
	enc  *hpack.Encoder
	done chan struct{} // closed when run returns

	mu      sync.Mutex
	changed *sync.Cond // a frame arrived, or the reader stopped or resumed
	paused  bool
	stopped bool // run returned: the connection ended
	broken  bool // a write failed
	errs    []string
	streams map[uint32]*ilPeerStream
	pings   map[[8]byte]bool // sent, not yet acknowledged

	connCredit, connRecv int64 // the connection's window granted, and used
	maxInitial           int64 // the largest SETTINGS_INITIAL_WINDOW_SIZE sent
	maxFrame             uint32
	settingsSent, acks   int
	goAway               *http2.GoAwayFrame // the server's first GOAWAY, with a later one's error code
}

// ilPeerStream is a stream as the client sees it.
type ilPeerStream struct {
	id          uint32
	kind        int
	reqEnded    bool // the client sent END_STREAM
	clientReset bool
	noBody      bool // a HEAD request, or a response without a body
	gotHeaders  bool
	ended       bool // the server sent END_STREAM
	serverReset bool
	received    int64 // DATA bytes, padding included
	credit      int64 // WINDOW_UPDATE increments sent
}

func newILPeer(nc net.Conn) *ilPeer {
	p := &ilPeer{
		nc:         nc,
		wfr:        http2.NewFramer(nc, nil),
		rfr:        http2.NewFramer(nil, nc),
		done:       make(chan struct{}),
		streams:    make(map[uint32]*ilPeerStream),
		pings:      make(map[[8]byte]bool),
		connCredit: 65535,
		maxInitial: 65535,
		maxFrame:   16 << 10,
	}
	p.changed = sync.NewCond(&p.mu)
	p.wfr.AllowIllegalWrites = true
	p.enc = hpack.NewEncoder(&p.hbuf)
	dec := hpack.NewDecoder(4096, nil)
	dec.SetAllowedMaxDynamicTableSize(1 << 20) // above any size the program advertises
	p.rfr.ReadMetaHeaders = dec
	return p
}

func (p *ilPeer) errorf(format string, args ...any) {
	if len(p.errs) < 10 {
		p.errs = append(p.errs, fmt.Sprintf(format, args...))
	}
}

// write runs one Framer write; a failure marks the peer broken, for the
// connection has ended.
func (p *ilPeer) write(f func(*http2.Framer) error) bool {
	if p.isBroken() {
		return false
	}
	if err := f(p.wfr); err != nil {
		p.mu.Lock()
		p.broken = true
		p.mu.Unlock()
		return false
	}
	return true
}

func (p *ilPeer) isBroken() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.broken || p.stopped
}

func (p *ilPeer) setPaused(paused bool) {
	p.mu.Lock()
	p.paused = paused
	p.changed.Broadcast()
	p.mu.Unlock()
}

// run reads and checks frames until the connection ends.
func (p *ilPeer) run() {
	defer close(p.done)
	defer func() {
		p.mu.Lock()
		p.stopped = true
		p.changed.Broadcast()
		p.mu.Unlock()
	}()
	for {
		p.mu.Lock()
		for p.paused && !p.stopped {
			p.changed.Wait()
		}
		p.mu.Unlock()
		f, err := p.rfr.ReadFrame()
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.ErrClosedPipe) {
				p.mu.Lock()
				p.errorf("the server wrote a malformed frame: %v", err)
				p.mu.Unlock()
			}
			return
		}
		p.mu.Lock()
		p.check(f)
		p.changed.Broadcast()
		p.mu.Unlock()
	}
}

// check verifies one frame from the server against the client's view.
func (p *ilPeer) check(f http2.Frame) {
	h := f.Header()
	if h.Length > max(p.maxFrame, 16<<10) {
		p.errorf("%v frame of %d bytes, above the client's SETTINGS_MAX_FRAME_SIZE", h.Type, h.Length)
	}
	st := p.streams[h.StreamID]
	switch f := f.(type) {
	case *http2.DataFrame:
		switch {
		case st == nil:
			p.errorf("DATA on stream %d, which the client never opened", h.StreamID)
			return
		case !st.gotHeaders:
			p.errorf("DATA before HEADERS on stream %d", st.id)
		case st.ended || st.serverReset:
			p.errorf("DATA on stream %d after its END_STREAM or RST_STREAM", st.id)
		}
		if st.noBody && len(f.Data()) > 0 {
			p.errorf("%d bytes of DATA on stream %d, whose response has no body", len(f.Data()), st.id)
		}
		st.received += int64(h.Length)
		p.connRecv += int64(h.Length)
		if p.connRecv > p.connCredit {
			p.errorf("%d bytes of DATA, the connection's window allowed %d", p.connRecv, p.connCredit)
		}
		if st.received > p.maxInitial+st.credit {
			p.errorf("%d bytes of DATA on stream %d, its window allowed at most %d", st.received, st.id, p.maxInitial+st.credit)
		}
		st.ended = st.ended || f.StreamEnded()
	case *http2.MetaHeadersFrame:
		switch {
		case st == nil:
			p.errorf("HEADERS on stream %d, which the client never opened", h.StreamID)
			return
		case st.gotHeaders:
			p.errorf("a second HEADERS on stream %d", st.id)
		case st.ended || st.serverReset:
			p.errorf("HEADERS on stream %d after its END_STREAM or RST_STREAM", st.id)
		}
		if f.PseudoValue("status") == "" {
			p.errorf("HEADERS without :status on stream %d", st.id)
		}
		st.gotHeaders = true
		st.ended = st.ended || f.StreamEnded()
	case *http2.RSTStreamFrame:
		if st == nil {
			p.errorf("RST_STREAM on stream %d, which the client never opened", h.StreamID)
			return
		}
		st.serverReset = true
	case *http2.SettingsFrame:
		if f.IsAck() {
			if p.acks++; p.acks > p.settingsSent {
				p.errorf("%d SETTINGS ACKs for %d SETTINGS", p.acks, p.settingsSent)
			}
		}
	case *http2.PingFrame:
		if f.IsAck() {
			delete(p.pings, f.Data)
		}
	case *http2.GoAwayFrame:
		switch {
		case p.goAway == nil:
			p.goAway = &http2.GoAwayFrame{LastStreamID: f.LastStreamID, ErrCode: f.ErrCode}
		case f.LastStreamID > p.goAway.LastStreamID:
			p.errorf("a GOAWAY raised the last stream id from %d to %d", p.goAway.LastStreamID, f.LastStreamID)
		case f.ErrCode != http2.ErrCodeNo:
			p.goAway.ErrCode = f.ErrCode // an error after a graceful GOAWAY
		}
	case *http2.WindowUpdateFrame:
	default:
		p.errorf("unexpected %v frame", h.Type)
	}
}

// sync sends a PING and waits for its ACK, at most for wait; it reports
// whether the server has processed everything sent before it.
func (p *ilPeer) sync(n uint64, wait time.Duration) bool {
	var data [8]byte
	for i := range data {
		data[i] = byte(n >> (8 * i))
	}
	p.mu.Lock()
	if p.paused {
		p.mu.Unlock()
		return false
	}
	p.pings[data] = true
	p.mu.Unlock()
	if !p.write(func(fr *http2.Framer) error { return fr.WritePing(false, data) }) {
		return false
	}
	return p.waitFor(wait, func() bool { return !p.pings[data] })
}

// waitFor waits, at most for wait, until cond (called with mu held) holds
// or the connection ends.
func (p *ilPeer) waitFor(wait time.Duration, cond func() bool) bool {
	timer := time.AfterFunc(wait, func() {
		p.mu.Lock()
		p.changed.Broadcast()
		p.mu.Unlock()
	})
	defer timer.Stop()
	deadline := time.Now().Add(wait)
	p.mu.Lock()
	defer p.mu.Unlock()
	for !cond() {
		if p.stopped || !time.Now().Before(deadline) {
			return false
		}
		p.changed.Wait()
	}
	return true
}

// pending lists the streams that must still end: neither side reset
// them, and the server took them (no GOAWAY left them out). mu is held.
func (p *ilPeer) pending() []uint32 {
	var ids []uint32
	for _, st := range p.streams {
		if st.clientReset || st.serverReset || st.ended {
			continue
		}
		if p.goAway != nil && st.id > p.goAway.LastStreamID {
			continue
		}
		ids = append(ids, st.id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// connFailed reports whether the server ended the connection with an
// error; its streams need not end then. mu is held.
func (p *ilPeer) connFailed() bool {
	return p.goAway != nil && p.goAway.ErrCode != http2.ErrCodeNo
}

// errorLog is a slog.Handler that keeps the server's error messages: a
// recovered panic in the connection's writer is one.
type errorLog struct {
	mu   sync.Mutex
	msgs []string
}

func (l *errorLog) Enabled(_ context.Context, lv slog.Level) bool { return lv >= slog.LevelError }
func (l *errorLog) WithAttrs([]slog.Attr) slog.Handler            { return l }
func (l *errorLog) WithGroup(string) slog.Handler                 { return l }

func (l *errorLog) Handle(_ context.Context, r slog.Record) error {
	msg := r.Message
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "panic" || a.Key == "stack" {
			msg += "\n" + a.Key + ": " + a.Value.String()
		}
		return true
	})
	l.mu.Lock()
	l.msgs = append(l.msgs, msg)
	l.mu.Unlock()
	return nil
}

func (l *errorLog) messages() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.msgs...)
}
