package h2_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/apiloom/apiloom/server/internal/h2"
)

// FuzzConnInterleaved reads the fuzz input as a program for a client that
// interleaves frames (requests, request bodies, resets, SETTINGS changes
// to the windows and frame size, WINDOW_UPDATEs, PINGs, GOAWAY, pauses in
// reading) with the progress of handlers that are slow, flush, write
// large bodies, or detach Sources fed by steps, by a goroutine, or always
// full (see fuzz_ilserver_test.go), and with the resets of streams the
// program starves of window (StreamWriteTimeout). FuzzServeConn reaches
// the frame parser; this target reaches the states between the reader,
// the writer and the handlers that it cannot.
//
// Whatever the program, the server must not panic (its writer's recovered
// panics are logged, and fail the run), must write only frames the client
// allowed (parsed, within the windows and frame size, in a valid stream
// state; see ilPeer.check), must keep its queues bounded, must end every
// stream it took once the client lets everything finish, must close
// every Source once and per the Source contract, and ServeConn must
// return once the client leaves.
func FuzzConnInterleaved(f *testing.F) {
	for _, seed := range interleavedSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		synctest.Test(t, func(t *testing.T) { runInterleaved(t, in) })
	})
}

// Bounds of one run, in the bubble's time (see FuzzServeConn): it passes
// only while every goroutine waits, for an answer the server owes or a
// timer, so each bound is met or not whatever the machine's load.
const (
	ilMaxOps      = 10000
	ilProgramTime = 2 * time.Second        // ops stop after this
	ilSyncWait    = 100 * time.Millisecond // a PING's ACK during the program
	ilSettle      = 3 * time.Second        // every stream ends within this at the end
)

// Program ops: the first byte of each selects one, the next bytes are
// its arguments (zero once the input ends). A stream argument picks among
// the streams opened, the oldest first, or with its high bit set the
// newest first.
const (
	opOpen     = iota // kind, flags (1: END_STREAM, 2: HEAD), size
	opOpen2           // the same: opening is common
	opData            // stream, length (2 bytes), flags (1: END_STREAM, 2: padded), padding
	opReset           // stream
	opConnWU          // increment (2 bytes), shift
	opStreamWU        // stream, increment (2 bytes), shift
	opSettings        // which, value
	opPing            // (none)
	opGoAway          // (none)
	opPause           // (none): stop or resume reading
	opStep            // stream, value
	opSync            // (none): PING, wait for the ACK, check the queues
	opTrailers        // stream
	opShutdown        // (none): Server.Shutdown
	opPriority        // stream
	opRepeat          // times, ops: the next ops (1 to 3, with their arguments) run that many times; nests once
	numOps
)

func runInterleaved(t *testing.T, in []byte) {
	logs := &errorLog{}
	// StreamWriteTimeout is short enough for a program that withholds
	// window to have streams reset by it.
	srv := &h2.Server{MaxConcurrentStreams: 6, MaxHeaderListSize: 4 << 10, WriteTimeout: 5 * time.Second,
		StreamWriteTimeout: 300 * time.Millisecond, Log: slog.New(logs)}
	x := newILServer()
	defer x.finishAll()
	client, server := net.Pipe()
	served := make(chan struct{})
	go func() {
		defer close(served)
		srv.ServeConn(context.Background(), server, x)
	}()
	peer := newILPeer(client)
	go peer.run()
	_ = client.SetWriteDeadline(time.Now().Add(fuzzServeDeadline))
	peer.mu.Lock()
	peer.settingsSent++
	peer.mu.Unlock()
	if _, err := client.Write([]byte(http2.ClientPreface)); err == nil {
		peer.write(func(fr *http2.Framer) error { return fr.WriteSettings() })
	}

	p := &ilProgram{t: t, in: in, peer: peer, x: x, srv: srv, nextID: 1}
	p.run()
	p.settle()
	x.finishAll()
	peer.setPaused(false)
	_ = client.Close()

	timer := time.NewTimer(fuzzServeDeadline)
	defer timer.Stop()
	select {
	case <-served:
	case <-timer.C:
		var stacks strings.Builder
		_ = pprof.Lookup("goroutine").WriteTo(&stacks, 2)
		t.Fatalf("ServeConn did not return within %v after the client left; goroutines:\n%s", fuzzServeDeadline, stacks.String())
	}
	<-peer.done
	feeders := make(chan struct{})
	go func() { x.feeders.Wait(); close(feeders) }()
	select {
	case <-feeders:
	case <-timer.C:
		t.Fatal("a Source's feeder goroutine still runs after ServeConn returned")
	}

	for _, msg := range logs.messages() {
		t.Errorf("server logged an error: %s", msg)
	}
	for _, e := range peer.errs {
		t.Error(e)
	}
	for _, e := range x.errs {
		t.Errorf("Source contract: %s", e)
	}
	if o, c := x.opened.Load(), x.closed.Load(); o != c {
		t.Errorf("%d Sources detached, %d closed", o, c)
	}
}

// ilProgram runs the fuzz input's ops.
type ilProgram struct {
	t      *testing.T
	in     []byte
	pos    int
	peer   *ilPeer
	x      *ilServer
	srv    *h2.Server
	nextID uint32
	ids    []uint32 // streams opened, in order
	ops    int      // ops run, repeated ones included
	pings  uint64
	paused bool
	shut   bool
	repeat int // how many opRepeats the current op is inside
}

func (p *ilProgram) byte() int {
	if p.pos >= len(p.in) {
		return 0
	}
	p.pos++
	return int(p.in[p.pos-1])
}

func (p *ilProgram) u16() int { return p.byte()<<8 | p.byte() }

// stream picks an opened stream, or nil.
func (p *ilProgram) stream() *ilPeerStream {
	i := p.byte()
	if len(p.ids) == 0 {
		return nil
	}
	j := (i & 0x7f) % len(p.ids)
	if i&0x80 != 0 {
		j = len(p.ids) - 1 - j
	}
	p.peer.mu.Lock()
	defer p.peer.mu.Unlock()
	return p.peer.streams[p.ids[j]]
}

func (p *ilProgram) run() {
	deadline := time.Now().Add(ilProgramTime)
	for p.pos < len(p.in) && p.more(deadline) {
		p.op(p.byte()%numOps, deadline)
	}
}

// more reports whether the program may run another op.
func (p *ilProgram) more(deadline time.Time) bool {
	return p.ops < ilMaxOps && time.Now().Before(deadline) && !p.peer.isBroken()
}

func (p *ilProgram) op(op int, deadline time.Time) {
	peer := p.peer
	p.ops++
	switch op {
	case opOpen, opOpen2:
		kind, flags, size := p.byte()%numKinds, p.byte(), p.byte()
		p.open(kind, flags, size)
	case opData:
		st, n, flags, pad := p.stream(), p.u16()%(16<<10), p.byte(), p.byte()
		if st == nil {
			return
		}
		peer.mu.Lock()
		st.reqEnded = st.reqEnded || flags&1 != 0
		peer.mu.Unlock()
		data := make([]byte, n)
		if flags&2 != 0 {
			pad = min(pad, 16<<10-1-n, 255)
			peer.write(func(fr *http2.Framer) error { return fr.WriteDataPadded(st.id, flags&1 != 0, data, make([]byte, pad)) })
		} else {
			peer.write(func(fr *http2.Framer) error { return fr.WriteData(st.id, flags&1 != 0, data) })
		}
	case opReset:
		if st := p.stream(); st != nil {
			peer.mu.Lock()
			st.clientReset = true
			peer.mu.Unlock()
			peer.write(func(fr *http2.Framer) error { return fr.WriteRSTStream(st.id, http2.ErrCodeCancel) })
		}
	case opConnWU:
		incr := uint32(p.u16()) << (p.byte() % 16) & 0x7fffffff
		peer.mu.Lock()
		peer.connCredit += int64(incr) // before the server can use it
		peer.mu.Unlock()
		peer.write(func(fr *http2.Framer) error { return fr.WriteWindowUpdate(0, incr) })
	case opStreamWU:
		st, incr := p.stream(), uint32(p.u16())<<(p.byte()%16)&0x7fffffff
		if st == nil {
			return
		}
		peer.mu.Lock()
		st.credit += int64(incr)
		peer.mu.Unlock()
		peer.write(func(fr *http2.Framer) error { return fr.WriteWindowUpdate(st.id, incr) })
	case opSettings:
		p.settings(p.byte(), p.byte())
	case opPing:
		p.pings++
		data := [8]byte{'p', byte(p.pings)}
		peer.write(func(fr *http2.Framer) error { return fr.WritePing(false, data) })
	case opGoAway:
		peer.write(func(fr *http2.Framer) error { return fr.WriteGoAway(0, http2.ErrCodeNo, nil) })
	case opPause:
		p.paused = !p.paused
		peer.setPaused(p.paused)
	case opStep:
		if st, v := p.stream(), p.byte(); st != nil {
			p.x.step(st.id, v)
		}
	case opSync:
		p.pings++
		if peer.sync(p.pings<<8, ilSyncWait) {
			p.checkQueues()
		}
	case opTrailers:
		if st := p.stream(); st != nil {
			peer.mu.Lock()
			st.reqEnded = true
			peer.mu.Unlock()
			p.headers(st.id, true, "x-trailer", "v")
		}
	case opShutdown:
		if !p.shut {
			p.shut = true
			p.srv.Shutdown()
		}
	case opPriority:
		if st := p.stream(); st != nil {
			peer.write(func(fr *http2.Framer) error {
				return fr.WritePriority(st.id, http2.PriorityParam{StreamDep: st.id + 2, Weight: 7})
			})
		}
	case opRepeat:
		times, n := 2+p.byte()%63, 1+p.byte()%3
		if p.repeat == 2 {
			return
		}
		p.repeat++
		defer func() { p.repeat-- }()
		start, end := p.pos, p.pos
		for range times {
			p.pos = start
			for range n {
				if p.more(deadline) {
					p.op(p.byte()%numOps, deadline)
				}
			}
			end = max(end, p.pos)
		}
		p.pos = end
	}
}

// open starts a request handled by kind.
func (p *ilProgram) open(kind, flags, size int) {
	id := p.nextID
	p.nextID += 2
	p.ids = append(p.ids, id)
	p.x.add(id, kind, size)
	end, head := flags&1 != 0, flags&2 != 0
	method := "POST"
	switch {
	case head:
		method, end = "HEAD", true
	case end:
		method = "GET"
	}
	p.peer.mu.Lock()
	p.peer.streams[id] = &ilPeerStream{id: id, kind: kind, reqEnded: end, noBody: head || kind == kindNoBody}
	p.peer.mu.Unlock()
	p.headers(id, end, ":method", method, ":scheme", "https", ":authority", "fuzz", ":path", "/s/"+strconv.Itoa(int(id)))
}

func (p *ilProgram) headers(id uint32, end bool, kv ...string) {
	peer := p.peer
	peer.hbuf.Reset()
	for i := 0; i+1 < len(kv); i += 2 {
		_ = peer.enc.WriteField(hpack.HeaderField{Name: kv[i], Value: kv[i+1]})
	}
	block := peer.hbuf.Bytes()
	peer.write(func(fr *http2.Framer) error {
		return fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block, EndStream: end, EndHeaders: true})
	})
}

// settings sends one setting; which and v choose it and its value.
func (p *ilProgram) settings(which, v int) {
	peer := p.peer
	var s http2.Setting
	switch which % 3 {
	case 0:
		vals := []uint32{0, 1, 100, 16 << 10, 65535, 1 << 20, 1<<31 - 1, uint32(v) << 8}
		s = http2.Setting{ID: http2.SettingInitialWindowSize, Val: vals[v%len(vals)]}
	case 1:
		vals := []uint32{16 << 10, 16<<10 + 1, 1 << 20, 1<<24 - 1}
		s = http2.Setting{ID: http2.SettingMaxFrameSize, Val: vals[v%len(vals)]}
	default:
		vals := []uint32{0, 100, 4096, 65536}
		s = http2.Setting{ID: http2.SettingHeaderTableSize, Val: vals[v%len(vals)]}
	}
	peer.mu.Lock()
	peer.settingsSent++
	switch s.ID {
	case http2.SettingInitialWindowSize:
		peer.maxInitial = max(peer.maxInitial, int64(s.Val))
	case http2.SettingMaxFrameSize:
		peer.maxFrame = max(peer.maxFrame, s.Val)
	}
	peer.mu.Unlock()
	peer.write(func(fr *http2.Framer) error { return fr.WriteSettings(s) })
}

// checkQueues checks the connection's queues: the ready queue and the
// connBlocked list hold open streams only, and the control frames waiting
// for the writer are bounded.
func (p *ilProgram) checkQueues() {
	for _, q := range p.srv.ConnQueues() {
		if q.Ready > q.Open || q.ConnBlocked > q.Open || q.Stalled > q.Open || q.Control > 129<<10 {
			p.peer.mu.Lock()
			p.peer.errorf("the connection holds %+v", q)
			p.peer.mu.Unlock()
		}
	}
}

// settle lets everything finish: reading resumes, the windows open, the
// handlers and Sources complete, the request bodies end; then every
// stream the server took must end within ilSettle.
func (p *ilProgram) settle() {
	peer := p.peer
	p.paused = false
	peer.setPaused(false)
	// With an initial window of 0, the client knows each stream's window
	// from its own WINDOW_UPDATEs once the server has applied it.
	peer.mu.Lock()
	peer.settingsSent++
	peer.mu.Unlock()
	peer.write(func(fr *http2.Framer) error {
		return fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0})
	})
	p.pings++
	if !peer.sync(p.pings<<8, time.Second) {
		return // the connection ended, or its server is stuck (which ServeConn's deadline catches)
	}
	p.x.finishAll()
	peer.mu.Lock()
	var ends []uint32
	for _, id := range p.ids {
		if st := peer.streams[id]; !st.reqEnded && !st.clientReset {
			st.reqEnded = true
			ends = append(ends, id)
		}
	}
	peer.mu.Unlock()
	for _, id := range ends {
		peer.write(func(fr *http2.Framer) error { return fr.WriteData(id, true, nil) })
	}

	deadline := time.Now().Add(ilSettle)
	for time.Now().Before(deadline) {
		p.grant()
		done := peer.waitFor(50*time.Millisecond, func() bool { return peer.connFailed() || len(peer.pending()) == 0 })
		if done || peer.isBroken() {
			break
		}
	}
	peer.mu.Lock()
	defer peer.mu.Unlock()
	if peer.connFailed() || peer.stopped && peer.goAway == nil {
		// Ended with an error, or closed before its GOAWAY was read (a
		// flood's, while the client did not read): streams need not end.
		// A recovered writer panic, which also closes, fails the run by
		// its log.
		return
	}
	if ids := peer.pending(); len(ids) > 0 {
		var states []string
		for _, id := range ids {
			st := peer.streams[id]
			states = append(states, fmt.Sprintf("%d (kind %d, headers %v, %d bytes)", id, st.kind, st.gotHeaders, st.received))
		}
		closed := ""
		if peer.stopped {
			closed = ", and the connection closed"
		}
		peer.errorf("streams never ended%s: %s; queues %+v", closed, strings.Join(states, ", "), p.srv.ConnQueues())
	}
}

// grant opens the connection's window and every stream's to 16 MiB, more
// than any handler writes.
func (p *ilProgram) grant() {
	const target = 1 << 24
	peer := p.peer
	type wu struct {
		id   uint32
		incr int64
	}
	var wus []wu
	peer.mu.Lock()
	if left := peer.connCredit - peer.connRecv; left < target/2 {
		incr := min(target-left, 1<<31-1)
		peer.connCredit += incr
		wus = append(wus, wu{0, incr})
	}
	for _, id := range p.ids {
		st := peer.streams[id]
		if st.clientReset || st.serverReset || st.ended {
			continue
		}
		if left := st.credit - st.received; left < target/2 { // the initial window is 0 now
			incr := min(target-left, 1<<31-1)
			st.credit += incr
			wus = append(wus, wu{id, incr})
		}
	}
	peer.mu.Unlock()
	for _, u := range wus {
		peer.write(func(fr *http2.Framer) error { return fr.WriteWindowUpdate(u.id, uint32(u.incr)) })
	}
}

// interleavedSeeds are programs that reach each kind of handler and each
// interleaving named in the target's doc.
func interleavedSeeds() [][]byte {
	return [][]byte{
		// A detached Source fed by steps, then ended.
		{opOpen, kindDetach, 1, 3, opStep, 0, 10, opSync, opStep, 0, 255, opOpen, kindSmall, 1, 0, opSync},
		// A lent body whose window shrinks to 0 and grows back, with a
		// larger frame size.
		{opOpen, kindLend, 1, 200, opSettings, 0, 0, opSync, opConnWU, 0xff, 0xff, 2, opStreamWU, 0, 0x10, 0, 4,
			opSettings, 1, 2, opSettings, 0, 5, opSync},
		// A client that stops reading while chunks are flushed and PINGs
		// pile up, then resumes.
		{opPause, opOpen, kindChunks, 1, 0, opStep, 0, 200, opStep, 0, 200, opStep, 0, 200, opStep, 0, 200,
			opPing, opPing, opPing, opPing, opPing, opPing, opPing, opPing, opPause, opSync},
		// An echoed body, padded, with trailers.
		{opOpen, kindEcho, 0, 0, opData, 0, 0x03, 0xe8, 2, 40, opData, 0, 0x40, 0, 0, 0, opSync, opTrailers, 0, opSync},
		// A Source that is always full, its window shrunk and opened, reset
		// while it appends; a feeder; GOAWAY.
		{opOpen, kindInfinite, 1, 0, opSettings, 0, 0, opStreamWU, 0, 0xff, 0xff, 8, opConnWU, 0xff, 0xff, 8,
			opReset, 0, opOpen, kindFeeder, 1, 20, opSync, opGoAway, opSync},
		// Slow handlers, a partly read body, and a graceful shutdown.
		{opOpen, kindSlow, 1, 0, opOpen, kindPartial, 0, 100, opData, 1, 0, 50, 0, 0, opShutdown, opStep, 0, 1,
			opStep, 1, 1, opSync, opOpen, kindSmall, 1, 0, opSync},
		// A panicking handler, a lent body then a Source, resets, priority.
		{opOpen, kindPanic, 1, 33, opOpen, kindLendDetach, 1, 0, opPriority, 1, opReset, 1, opOpen, kindLendDetach, 1, 0,
			opSync, opSettings, 2, 0, opOpen, kindSmall, 1, 0, opSync},
		// Streams opened and reset while the client does not read.
		{opPause, opRepeat, 62, 2, opOpen, kindSmall, 1, 0, opReset, 0x80, opPause, opSync},
		// Streams opened and reset while they wait for the connection's window.
		{opOpen, kindLend, 1, 60, opSync, opRepeat, 30, 2, opOpen, kindSmall, 1, 0, opReset, 0x80, opSync},
		// Responses without a body: to HEAD, 204 and 304, with Sources.
		{opOpen, kindDetach, 3, 2, opOpen, kindNoBody, 1, 2, opOpen, kindNoBody, 1, 3, opOpen, kindLend, 2, 5, opSync},
		// A PING flood from a client that does not read.
		{opPause, opRepeat, 62, 1, opRepeat, 62, 1, opPing, opPause, opSync},
		// More streams than the limit, all slow.
		{opOpen, kindSlow, 1, 0, opOpen, kindSlow, 1, 0, opOpen, kindSlow, 1, 0, opOpen, kindSlow, 1, 0,
			opOpen, kindSlow, 1, 0, opOpen, kindSlow, 1, 0, opOpen, kindSlow, 1, 0, opOpen, kindSlow, 1, 0, opSync},
	}
}
