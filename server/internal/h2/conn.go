package h2

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/apiloom/apiloom/server/detach"
)

const (
	// initialStreamWindow is each request body's flow-control window: a
	// write's body (at most a few MiB) arrives in a few round trips.
	initialStreamWindow = 1 << 20
	// connWindow is the receive window shared by a connection's bodies.
	connWindow = 4 << 20
	// maxReadFrame is the largest frame accepted: the protocol's default,
	// which this server does not raise.
	maxReadFrame = 16 << 10
	// defaultWindow is a window before the peer's SETTINGS change it.
	defaultWindow = 65535
	maxWindow     = 1<<31 - 1
	// prefaceTimeout bounds the wait for the client's preface.
	prefaceTimeout = 10 * time.Second
	// goAwayGrace is how long a connection with no open streams lingers
	// after GOAWAY, so the client reads it before the close.
	goAwayGrace = time.Second
	// maxControlBacklog bounds the control frames (PING and SETTINGS
	// ACKs, RST_STREAMs, WINDOW_UPDATEs) waiting for the writer. Each
	// answers a client's frame, so a client that sends such frames and
	// never reads would grow them without bound while the writer is stuck
	// (CVE-2019-9512, -9515); it loses the connection instead. The writer
	// takes them at every turn, so a client that reads keeps a few.
	maxControlBacklog = 128 << 10
)

var clientPreface = []byte(http2.ClientPreface)

// conn is one HTTP/2 connection. Its goroutine (serve, "the reader")
// reads and handles frames; one writer goroutine (writeLoop) writes every
// frame; each request runs its handler in a goroutine of its own until it
// returns or detaches; a detached stream's Source wakes it from any
// goroutine; timers (idle, close, stall, deadlines) run their functions on
// goroutines of their own. Who may touch each field is written below, as
// x/net/http2's serverConn does.
type conn struct {
	// Immutable once newConn returns.
	srv        *Server
	nc         net.Conn
	handler    http.Handler
	ctx        context.Context // requests' contexts derive from it
	log        *slog.Logger
	tls        *tls.ConnectionState
	writerDone chan struct{} // closed by the writer goroutine when it returns

	// Owned by the reader goroutine.
	br    *bufio.Reader
	guard *frameGuard
	fr    *http2.Framer // read side only

	// workers runs the handlers; teardown stops them and waits for the
	// last handler to return.
	workers *workers

	// mu guards every field below it, and every stream's fields but its
	// immutable ones (see stream). Lock order: mu before a requestBody's
	// mu, never the other way.
	mu   sync.Mutex
	work sync.Cond // the writer has something to do; L is &mu

	streams map[uint32]*stream // open streams, by id
	// maxClientID is the highest stream id the client used. Written by
	// the reader only, which therefore reads it without mu.
	maxClientID uint32
	open        int // streams counted against the limit
	running     int // handler goroutines not yet returned

	control     []byte          // encoded control frames, sent before stream frames
	toClose     []detach.Source // sources of streams the writer ended, for it to close
	head, tail  *stream         // the writer's ready queue
	connBlocked []*stream       // streams waiting for the connection's send window
	sendWindow  int64           // connection-level send window
	peerWindow  int64           // the client's SETTINGS_INITIAL_WINDOW_SIZE
	peerFrame   int             // the client's SETTINGS_MAX_FRAME_SIZE
	tableSize   uint32
	tableChange bool   // tableSize is new for the writer's encoder
	recvWindow  int64  // connection-level receive window left
	recvCredit  int64  // received bytes consumed but not yet returned
	goingAway   bool   // GOAWAY is queued: no new streams
	goAwayLast  uint32 // the last stream id of the first GOAWAY
	closing     bool   // the connection ends: the writer drains and exits
	closeTimer  *time.Timer
	// idleTimer sends GOAWAY after IdleTimeout with no open stream. Set
	// by the reader before any other goroutine of the connection starts.
	idleTimer *time.Timer
	// cutShort holds the last streams closed while the client could still
	// send on them (reset by either side, or answered before the body
	// ended), whose trailers in flight get a stream error, not the
	// connection's. A few suffice: they are in flight for a round trip.
	cutShort     [16]uint32
	cutShortNext int
	// stalled holds the streams waiting for window with data to send,
	// oldest first; stallTimer fires when the oldest has waited
	// StreamWriteTimeout (stall.go).
	stalled    []*stream
	stallTimer *time.Timer
	// budget accounts for the work the client made the connection do for
	// nothing (calm.go).
	budget budget
}

func newConn(ctx context.Context, s *Server, nc net.Conn, h http.Handler) *conn {
	c := &conn{
		srv:        s,
		nc:         nc,
		handler:    h,
		ctx:        ctx,
		log:        s.log().With("remote", nc.RemoteAddr().String()),
		writerDone: make(chan struct{}),
		workers:    newWorkers(workerIdle),
		streams:    make(map[uint32]*stream),
		sendWindow: defaultWindow,
		peerWindow: defaultWindow,
		peerFrame:  16 << 10,
		recvWindow: connWindow,
		budget:     newBudget(s.overheadBudget()),
	}
	c.work.L = &c.mu
	if tc, ok := nc.(*tls.Conn); ok {
		st := tc.ConnectionState()
		c.tls = &st
	}
	c.br = bufio.NewReaderSize(nc, 16<<10)
	c.guard = newFrameGuard(c.br, nc, s.frameTimeout(), s.maxHeaderListSize())
	c.fr = http2.NewFramer(nil, c.guard)
	c.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	c.fr.MaxHeaderListSize = s.maxHeaderListSize()
	c.fr.SetMaxReadFrameSize(maxReadFrame)
	// Frames are handled before the next is read and DATA is copied out,
	// so the Framer may reuse them: no allocation per DATA frame.
	c.fr.SetReuseFrames()
	return c
}

// serve runs the connection: the preface, then frames until the client
// leaves or a connection error. It returns after the writer and every
// handler have stopped.
func (c *conn) serve() {
	if c.srv.IdleTimeout > 0 { // here, not in newConn: a connection refused at Shutdown never serves
		c.idleTimer = time.AfterFunc(c.srv.IdleTimeout, c.goAway)
	}
	stopWaking := context.AfterFunc(c.ctx, c.wakeSources)
	defer stopWaking()
	go func() {
		defer close(c.writerDone)
		// A panic here (a bug, ours or a Source's) must not take the
		// whole server down: log it and end this connection.
		defer func() {
			if p := recover(); p != nil {
				c.log.Error("http2: connection writer panicked", "panic", p, "stack", string(debug.Stack()))
				_ = c.nc.Close()
			}
		}()
		c.writeLoop()
	}()
	defer c.teardown()

	if err := c.readPreface(); err != nil {
		c.log.Debug("http2: bad preface", "err", err)
		c.fail(http2.ErrCodeProtocol)
		return
	}
	for {
		prevMax := c.maxClientID // written by this goroutine only
		f, err := c.fr.ReadFrame()
		if err == nil {
			err = c.process(f)
		}
		var se http2.StreamError
		if errors.As(err, &se) {
			c.mu.Lock()
			if f == nil && se.StreamID%2 == 1 && se.StreamID > c.maxClientID {
				// The Framer rejected a request's header block: the
				// stream was opened and is now reset, not idle, so the
				// rest of its body is a stream error too, not the
				// connection's end.
				c.maxClientID = se.StreamID
				c.cutShort[c.cutShortNext%len(c.cutShort)] = se.StreamID
				c.cutShortNext++
			}
			if st := c.streams[se.StreamID]; st != nil && !st.answered || se.StreamID%2 == 1 && se.StreamID > prevMax {
				// A stream the client's frame opened and the server
				// refused or rejected, or one it made the server reset
				// before its response began (MadeYouReset): work for
				// nothing. A frame on a stream already closed is not.
				c.chargeLocked(costWasted)
			}
			src := c.resetLocked(se.StreamID, se.Code)
			c.mu.Unlock()
			if src != nil {
				src.Close()
			}
			err = nil
		}
		if err == nil {
			err = c.account(f)
		}
		if err == nil {
			continue
		}
		var ce http2.ConnectionError
		switch {
		case errors.As(err, &ce):
			c.log.Debug("http2: connection error", "code", http2.ErrCode(ce), "err", c.fr.ErrorDetail())
			c.fail(http2.ErrCode(ce))
			return
		case errors.Is(err, http2.ErrFrameTooLarge):
			// Its payload is still unread, so no later frame can be found.
			c.fail(http2.ErrCodeFrameSize)
			return
		case errors.Is(err, errSlowFrame), errors.Is(err, errContinuationFlood):
			c.log.Warn("http2: ending the connection", "err", err)
			c.fail(http2.ErrCodeEnhanceYourCalm)
			return
		default:
			return // the client left, or the connection broke
		}
	}
}

// account charges the frame just handled to the client's budget, and
// ends the connection with ENHANCE_YOUR_CALM when the client has made it
// queue more answers than a reading client can cause (CVE-2019-9512,
// -9514, -9515), or do more work for nothing than its budget allows.
func (c *conn) account(f http2.Frame) error {
	cost := frameCost(f)
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.chargeLocked(cost)
	switch {
	case len(c.control) > maxControlBacklog:
		c.log.Warn("http2: client sends frames that need answers but does not read them")
		return http2.ConnectionError(http2.ErrCodeEnhanceYourCalm)
	case c.overBudgetLocked(now):
		c.log.Warn("http2: client made the connection work for nothing beyond its budget", "owed", c.budget.owed, "budget", c.budget.limit)
		return http2.ConnectionError(http2.ErrCodeEnhanceYourCalm)
	}
	return nil
}

// readPreface reads the client's magic string and its first frame, which
// must be SETTINGS.
func (c *conn) readPreface() error {
	_ = c.nc.SetReadDeadline(time.Now().Add(prefaceTimeout))
	defer func() { _ = c.nc.SetReadDeadline(time.Time{}) }()
	buf := make([]byte, len(clientPreface))
	if _, err := io.ReadFull(c.br, buf); err != nil {
		return err
	}
	if string(buf) != http2.ClientPreface {
		return errors.New("not the HTTP/2 client preface")
	}
	f, err := c.fr.ReadFrame()
	if err != nil {
		return err
	}
	sf, ok := f.(*http2.SettingsFrame)
	if !ok || sf.IsAck() {
		return errors.New("the client preface's first frame is not SETTINGS")
	}
	return c.process(sf)
}

// fail sends GOAWAY with code and lets the connection end. After a
// graceful GOAWAY it sends a second one with the error's code, and the
// same last stream id (which may never grow): otherwise the client would
// see the connection close with its streams unfinished and no reason.
func (c *conn) fail(code http2.ErrCode) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case !c.goingAway:
		c.goingAway, c.goAwayLast = true, c.maxClientID
		c.control = appendGoAway(c.control, c.goAwayLast, code)
	case code != http2.ErrCodeNo && !c.closing:
		c.control = appendGoAway(c.control, c.goAwayLast, code)
	}
	c.closing = true
	c.work.Signal()
}

// goAway starts a graceful close: GOAWAY, no new streams, and the
// connection closes once its open streams are done.
func (c *conn) goAway() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.goingAway {
		return
	}
	c.goingAway, c.goAwayLast = true, c.maxClientID
	c.control = appendGoAway(c.control, c.goAwayLast, http2.ErrCodeNo)
	c.work.Signal()
	c.closeIfIdleLocked()
}

// closeIfIdleLocked closes the connection shortly after GOAWAY once no
// stream is open; the pause lets the client read the GOAWAY first.
func (c *conn) closeIfIdleLocked() {
	if c.goingAway && c.open == 0 && c.closeTimer == nil {
		c.closeTimer = time.AfterFunc(goAwayGrace, func() { _ = c.nc.Close() })
	}
}

// teardown ends every stream, lets the writer drain briefly, closes the
// connection and waits for the writer, the handlers and their goroutines.
func (c *conn) teardown() {
	c.mu.Lock()
	c.closing = true
	var sources []detach.Source
	for _, st := range c.streams {
		if src := c.closeStreamLocked(st, noReset); src != nil {
			sources = append(sources, src)
		}
	}
	if c.closeTimer != nil {
		c.closeTimer.Stop()
	}
	if c.idleTimer != nil {
		c.idleTimer.Stop()
	}
	if c.stallTimer != nil {
		c.stallTimer.Stop()
	}
	c.work.Broadcast()
	c.mu.Unlock()
	for _, src := range sources {
		src.Close()
	}

	grace := time.NewTimer(goAwayGrace)
	select {
	case <-c.writerDone:
	case <-grace.C:
	}
	grace.Stop()
	_ = c.nc.Close()
	<-c.writerDone
	c.mu.Lock()
	sources = c.toClose // closed after the writer stopped taking them
	c.toClose = nil
	c.mu.Unlock()
	for _, src := range sources {
		src.Close()
	}
	c.workers.stop()
	c.workers.wait()
}

// readyLocked queues st for the writer, once.
func (c *conn) readyLocked(st *stream) {
	if st.queued || st.closed {
		return
	}
	st.queued = true
	st.prev = c.tail
	if c.tail == nil {
		c.head = st
	} else {
		c.tail.next = st
	}
	c.tail = st
	c.work.Signal()
}

// unqueueLocked takes st out of the ready queue and the connBlocked and
// stalled lists, once it is closed: a client that opens and resets
// streams while the writer is stuck, or while the connection's window is
// exhausted, would otherwise make them hold closed streams without bound.
func (c *conn) unqueueLocked(st *stream) {
	if st.queued {
		if st.prev == nil {
			c.head = st.next
		} else {
			st.prev.next = st.next
		}
		if st.next == nil {
			c.tail = st.prev
		} else {
			st.next.prev = st.prev
		}
		st.prev, st.next, st.queued = nil, nil, false
	}
	if st.connBlocked {
		// The list holds open streams only, so this scan is bounded by
		// the stream limit.
		if i := slices.Index(c.connBlocked, st); i >= 0 {
			c.connBlocked = slices.Delete(c.connBlocked, i, i+1)
		}
		st.connBlocked = false
	}
	c.progressLocked(st) // out of the stalled list
}

// blockLocked parks st until a WINDOW_UPDATE: its own, or the
// connection's if that window is the one exhausted. Keeping the latter in a
// list spares scanning every stream at each connection-level update, which
// clients send often. When pending, the stream has data waiting, and the
// wait counts towards StreamWriteTimeout.
func (c *conn) blockLocked(st *stream, pending bool) {
	st.flowBlocked = true
	if c.sendWindow <= 0 && !st.connBlocked {
		st.connBlocked = true
		c.connBlocked = append(c.connBlocked, st)
	}
	if pending {
		c.stallLocked(st)
	}
}

// popReadyLocked takes the stream at the head of the ready queue.
func (c *conn) popReadyLocked() *stream {
	st := c.head
	if st == nil {
		return nil
	}
	c.head, st.next = st.next, nil
	if c.head == nil {
		c.tail = nil
	} else {
		c.head.prev = nil
	}
	st.queued = false
	return st
}

// wake is a Source's wake-up for st: queue it for the writer.
func (c *conn) wake(st *stream) {
	c.mu.Lock()
	st.srcPending = true
	if st.flowBlocked {
		// It has data now, and the client's grants take it again
		// (refill.go); meanwhile the data waits for window.
		c.stallLocked(st)
	} else {
		c.readyLocked(st)
	}
	c.mu.Unlock()
}

// wakeSources wakes every detached Source once the connection's context
// ends (the server is shutting down): every request's context ends with
// it, and a Source need not watch its own (detach.Detacher). The stream's
// context is ended here first: context.AfterFunc starts this while the
// connection's context is still ending its children, so a stream's may
// not have ended yet, and a Source polled then would find it alive and
// never be woken again.
func (c *conn) wakeSources() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.streams {
		if st.src != nil && !st.closed {
			st.cancel()
			st.srcPending = true
			c.readyLocked(st)
		}
	}
}

// resetLocked ends stream id with RST_STREAM(code), if it is open, or just
// sends the RST_STREAM for a stream already gone. It returns the stream's
// source, if any, for the caller to Close once mu is released.
func (c *conn) resetLocked(id uint32, code http2.ErrCode) detach.Source {
	if st := c.streams[id]; st != nil {
		return c.closeStreamLocked(st, code)
	}
	c.control = appendRSTStream(c.control, id, code)
	c.work.Signal()
	return nil
}

// cutShortLocked reports whether stream id was closed recently while the
// client could still send on it.
func (c *conn) cutShortLocked(id uint32) bool {
	return slices.Contains(c.cutShort[:], id)
}

// noReset closes a stream without RST_STREAM: the client reset it, or the
// whole connection is going.
const noReset = ^http2.ErrCode(0)

// closeStreamLocked ends st: RST_STREAM(code) unless code is noReset,
// its context cancelled, its body and waiting handler released. It
// returns st's source for the caller to Close outside mu, unless the
// writer is inside Append on it (the writer closes it then).
func (c *conn) closeStreamLocked(st *stream, code http2.ErrCode) detach.Source {
	if st.closed {
		return nil
	}
	st.closed = true
	if code != noReset {
		c.control = appendRSTStream(c.control, st.id, code)
		c.work.Signal()
	}
	delete(c.streams, st.id)
	c.unqueueLocked(st)
	if !st.remoteClosed {
		c.cutShort[c.cutShortNext%len(c.cutShort)] = st.id
		c.cutShortNext++
	}
	c.open--
	st.readDeadline.stopLocked()
	st.writeDeadline.stopLocked()
	st.cancel()
	if st.body != nil {
		if n := st.body.abort(errStreamClosed); n > 0 && !c.closing {
			c.creditLocked(int64(n), true)
		}
	}
	st.drained.Broadcast()
	st.data = nil
	if c.open == 0 && c.idleTimer != nil {
		c.idleTimer.Reset(c.srv.IdleTimeout)
	}
	c.closeIfIdleLocked()
	if st.src == nil || st.appending {
		return nil
	}
	src := st.src
	st.src = nil
	return src
}
