package h2_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apiloom/apiloom/server/detach"
)

// The server side of FuzzConnInterleaved: handlers of every kind, driven
// by the fuzz program through per-stream steps, and Sources that check
// the connection keeps their contract.

// Handler kinds, chosen by the program when it opens a stream.
const (
	kindSmall      = iota // a small body
	kindLend              // one large Write, lent to the connection
	kindChunks            // a flushed chunk per step
	kindEcho              // the request body back, flushed as it comes
	kindPartial           // reads part of the body, closes it, answers after a step
	kindSlow              // answers after a step
	kindDetach            // a prefix, then a Source fed by steps
	kindFeeder            // a Source fed by a goroutine of its own
	kindInfinite          // a Source that has data whenever asked, up to 1 MiB
	kindLendDetach        // a lent Write, then a Source
	kindPanic             // writes, maybe flushes, then panics
	kindNoBody            // 204 or 304, a Write, maybe a Source
	numKinds
)

// ilServer is the handler of one FuzzConnInterleaved run. What it finds
// wrong (a Source's contract broken) goes to errs.
type ilServer struct {
	finish     chan struct{} // closed when the program ends: everything completes
	finishOnce sync.Once
	feeders    sync.WaitGroup

	mu      sync.Mutex
	streams map[uint32]*ilStream
	sources []*ilSource
	errs    []string

	opened, closed atomic.Int64 // Sources detached, and closed
}

func newILServer() *ilServer {
	return &ilServer{finish: make(chan struct{}), streams: make(map[uint32]*ilStream)}
}

// ilStream is what the program tells a stream's handler.
type ilStream struct {
	kind  int
	size  int
	steps chan int
	src   *ilSource // set by the handler once it detached; guarded by ilServer.mu
}

func (x *ilServer) fail(format string, args ...any) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(x.errs) < 10 {
		x.errs = append(x.errs, fmt.Sprintf(format, args...))
	}
}

func (x *ilServer) finished() bool {
	select {
	case <-x.finish:
		return true
	default:
		return false
	}
}

// add registers stream id before the program sends its HEADERS.
func (x *ilServer) add(id uint32, kind, size int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.streams[id] = &ilStream{kind: kind, size: size, steps: make(chan int, 8)}
}

// step hands v to stream id's handler, or its Source, without blocking.
func (x *ilServer) step(id uint32, v int) {
	x.mu.Lock()
	s := x.streams[id]
	var src *ilSource
	if s != nil {
		src = s.src
	}
	x.mu.Unlock()
	switch {
	case s == nil:
	case src != nil:
		src.push(bytes.Repeat([]byte{'s'}, v*50), v == 255)
	default:
		select {
		case s.steps <- v:
		default:
		}
	}
}

// finishAll lets every handler and Source complete.
func (x *ilServer) finishAll() {
	x.finishOnce.Do(func() { close(x.finish) })
	x.mu.Lock()
	sources := x.sources
	x.mu.Unlock()
	for _, src := range sources {
		src.poke()
	}
}

// next waits for the handler's next step; false once the program ended
// or the request did.
func (x *ilServer) next(ctx context.Context, s *ilStream) (int, bool) {
	select {
	case v := <-s.steps:
		return v, true
	case <-x.finish:
		return 0, false
	case <-ctx.Done():
		return 0, false
	}
}

func (x *ilServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.ParseUint(strings.TrimPrefix(r.URL.Path, "/s/"), 10, 32)
	x.mu.Lock()
	s := x.streams[uint32(id)]
	x.mu.Unlock()
	if s == nil {
		_, _ = io.WriteString(w, "unknown stream")
		return
	}
	ctx, size := r.Context(), s.size
	flush := func() { w.(http.Flusher).Flush() }
	switch s.kind {
	case kindSmall:
		_, _ = io.WriteString(w, "ok\n")
	case kindLend:
		_, _ = w.Write(bytes.Repeat([]byte{'L'}, 1+size*1200))
		_, _ = io.WriteString(w, "tail")
	case kindChunks:
		for {
			v, ok := x.next(ctx, s)
			if !ok {
				return
			}
			_, _ = w.Write(bytes.Repeat([]byte{'c'}, 1+v*97))
			flush()
		}
	case kindEcho:
		buf := make([]byte, 4096)
		for {
			n, err := r.Body.Read(buf)
			if n > 0 {
				if _, werr := w.Write(buf[:n]); werr != nil {
					return
				}
				flush()
			}
			if err != nil {
				return
			}
		}
	case kindPartial:
		_, _ = io.ReadFull(r.Body, make([]byte, size))
		_ = r.Body.Close()
		x.next(ctx, s)
		_, _ = io.WriteString(w, "done")
	case kindSlow:
		x.next(ctx, s)
		_, _ = io.WriteString(w, "late")
	case kindDetach:
		_, _ = w.Write(bytes.Repeat([]byte{'p'}, size*100))
		if size%2 == 1 {
			flush()
		}
		w.(detach.Detacher).DetachBody(x.newSource(s, false))
	case kindFeeder:
		src := x.newSource(s, false)
		w.(detach.Detacher).DetachBody(src)
		x.feeders.Go(func() {
			for range 8 + size {
				if src.isClosed() || x.finished() || ctx.Err() != nil {
					return
				}
				src.push(bytes.Repeat([]byte{'f'}, 1000), false)
				runtime.Gosched()
			}
		})
	case kindInfinite:
		w.(detach.Detacher).DetachBody(x.newSource(s, true))
	case kindLendDetach:
		_, _ = w.Write(bytes.Repeat([]byte{'l'}, 40<<10))
		w.(detach.Detacher).DetachBody(x.newSource(s, false))
	case kindNoBody:
		w.WriteHeader(http.StatusNoContent + size%2*(http.StatusNotModified-http.StatusNoContent))
		_, _ = io.WriteString(w, "no body allowed")
		if size&2 != 0 {
			w.(detach.Detacher).DetachBody(x.newSource(s, false))
		}
	case kindPanic:
		_, _ = w.Write(bytes.Repeat([]byte{'!'}, size))
		if size%2 == 1 {
			flush()
		}
		panic(http.ErrAbortHandler)
	}
}

// ilSource is a Source fed by steps or a feeder, or (infinite) with data
// whenever asked, that records every breach of the Source contract.
type ilSource struct {
	x        *ilServer
	infinite bool
	inAppend atomic.Bool

	mu      sync.Mutex
	pending []byte
	ended   bool
	closed  bool
	given   int
	wake    func()
}

func (x *ilServer) newSource(s *ilStream, infinite bool) *ilSource {
	src := &ilSource{x: x, infinite: infinite}
	x.opened.Add(1)
	x.mu.Lock()
	s.src = src
	x.sources = append(x.sources, src)
	x.mu.Unlock()
	return src
}

func (s *ilSource) Start(wake func()) {
	s.mu.Lock()
	if s.wake != nil {
		s.x.fail("Start called twice")
	}
	s.wake = wake
	s.mu.Unlock()
	wake()
}

func (s *ilSource) Append(dst []byte, limit int) ([]byte, bool) {
	if s.inAppend.Swap(true) {
		s.x.fail("two Appends at once")
	}
	defer s.inAppend.Store(false)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		s.x.fail("Append after Close")
		return dst, false
	}
	if s.wake == nil {
		s.x.fail("Append before Start")
	}
	if limit <= 0 {
		s.x.fail("Append with limit %d", limit)
		return dst, false
	}
	finished := s.x.finished()
	if s.infinite && !finished && s.given < 1<<20 {
		n := min(limit, 1<<20-s.given)
		s.given += n
		return append(dst, bytes.Repeat([]byte{'i'}, n)...), false
	}
	n := min(limit, len(s.pending))
	dst = append(dst, s.pending[:n]...)
	s.pending = s.pending[n:]
	end := len(s.pending) == 0 && (s.ended || finished)
	if n > 0 && !end {
		s.wake() // from inside Append, as a Source may; its next Append gives nothing, so no loop
	}
	return dst, end
}

func (s *ilSource) Close() {
	if s.inAppend.Load() {
		s.x.fail("Close during Append")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		s.x.fail("Close called twice")
		return
	}
	s.closed = true
	s.pending = nil
	s.x.closed.Add(1)
	if s.wake != nil {
		s.wake() // a late wake, as a Source's producer may race with Close; harmless
	}
}

func (s *ilSource) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

func (s *ilSource) push(b []byte, end bool) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.pending = append(s.pending, b...)
	s.ended = s.ended || end
	wake := s.wake
	s.mu.Unlock()
	if wake != nil {
		wake() // else Start will
	}
}

// poke wakes the source after finish, which ends it.
func (s *ilSource) poke() {
	s.mu.Lock()
	wake := s.wake
	s.mu.Unlock()
	if wake != nil {
		wake()
	}
}
