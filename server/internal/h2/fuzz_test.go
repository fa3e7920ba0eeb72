package h2_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/apiloom/apiloom/server/detach"
	"github.com/apiloom/apiloom/server/internal/h2"
)

// FuzzServeConn and FuzzConnInterleaved run each input in a synctest
// bubble over net.Pipe: time is the bubble's, and passes only when every
// goroutine of the run waits, so no outcome depends on how busy the
// machine is, and a failing input fails again when run again.

// fuzzServeDeadline is how long ServeConn may take to return once the
// client has written its bytes and left, in the bubble's time: a run that
// gets there is stuck, whatever the machine's load.
const fuzzServeDeadline = 5 * time.Second

// FuzzServeConn feeds arbitrary bytes after a valid client preface and
// SETTINGS frame to a connection, lets the server do all it will with
// them, then leaves. Whatever the bytes, the connection must not panic
// (its writer's recovered panics are logged, and fail the run), must
// write only well-formed frames, and ServeConn must return: every
// handler, blocked body read, blocked write and Source must be released
// when the client goes, and every Source closed once.
func FuzzServeConn(f *testing.F) {
	for _, seed := range fuzzSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		synctest.Test(t, func(t *testing.T) { runServeConn(t, in) })
	})
}

func runServeConn(t *testing.T, in []byte) {
	logs := &errorLog{}
	srv := &h2.Server{MaxConcurrentStreams: 4, MaxHeaderListSize: 4 << 10, WriteTimeout: 5 * time.Second, Log: slog.New(logs)}
	h := &fuzzHandler{}
	client, server := net.Pipe()
	served := make(chan struct{})
	go func() {
		defer close(served)
		srv.ServeConn(context.Background(), server, h)
	}()
	rd := newFuzzReader(client)
	go rd.run()

	// A write fails once the server has given up on the connection;
	// the deadline covers a server that stops reading but stays.
	_ = client.SetWriteDeadline(time.Now().Add(fuzzServeDeadline))
	for _, b := range [][]byte{[]byte(http2.ClientPreface), fuzzSettings, in} {
		if _, err := client.Write(b); err != nil {
			break
		}
	}
	// Every goroutine of the run now waits: the server has handled all
	// it read, its handlers have answered, its writer has written what
	// it may, and the reader has read it.
	synctest.Wait()
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
	<-rd.done
	if rd.err != nil {
		t.Fatalf("the server wrote a malformed frame: %v", rd.err)
	}
	for _, msg := range logs.messages() {
		if !strings.HasPrefix(msg, "http2: handler panicked") {
			t.Errorf("server logged an error: %s", msg)
		}
	}
	if o, c := h.opened.Load(), h.closed.Load(); o != c || h.twice.Load() {
		t.Errorf("%d Sources detached, %d closed (twice: %v)", o, c, h.twice.Load())
	}
}

// fuzzReader reads what the server writes, as a client would, checking
// that each frame is well-formed.
type fuzzReader struct {
	fr   *http2.Framer
	done chan struct{} // closed when run returns
	err  error         // a malformed frame, set before done closes
}

func newFuzzReader(nc net.Conn) *fuzzReader {
	fr := http2.NewFramer(nil, nc)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	return &fuzzReader{fr: fr, done: make(chan struct{})}
}

func (r *fuzzReader) run() {
	defer close(r.done)
	for {
		if _, err := r.fr.ReadFrame(); err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.ErrClosedPipe) {
				r.err = err
			}
			return
		}
	}
}

// fuzzSettings is the client's first SETTINGS frame, empty.
var fuzzSettings = []byte{0, 0, 0, byte(http2.FrameSettings), 0, 0, 0, 0, 0}

// fuzzHandler answers by path, so that the seeds reach each way a response
// is produced: a small buffered body (the default, after reading the
// request body), a body larger than the flow-control windows, a flushed
// body, and a detached Source, whose Closes it counts.
type fuzzHandler struct {
	opened, closed atomic.Int64
	twice          atomic.Bool
}

func (h *fuzzHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/big":
		_, _ = w.Write(bytes.Repeat([]byte("x"), 200<<10))
	case "/flush":
		_, _ = io.WriteString(w, "head")
		w.(http.Flusher).Flush()
		_, _ = io.Copy(w, r.Body)
	case "/detach":
		_, _ = io.WriteString(w, "before ")
		h.opened.Add(1)
		w.(detach.Detacher).DetachBody(&fuzzSource{left: 3, h: h})
	case "/panic":
		panic(http.ErrAbortHandler)
	default:
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, "ok\n")
	}
}

// fuzzSource is a Source that gives a chunk each time it is asked, left
// times, then ends.
type fuzzSource struct {
	h      *fuzzHandler
	mu     sync.Mutex
	left   int
	closed bool
}

func (s *fuzzSource) Start(wake func()) { wake() }

func (s *fuzzSource) Append(dst []byte, limit int) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	chunk := "chunk\n"
	if s.left == 0 {
		return dst, true
	}
	s.left--
	return append(dst, chunk[:min(len(chunk), limit)]...), s.left == 0
}

func (s *fuzzSource) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		s.h.twice.Store(true)
	}
	s.closed = true
	s.h.closed.Add(1)
}

// fuzzSeeds builds the seed corpus: well-formed exchanges of every frame
// type a client sends, and broken ones.
func fuzzSeeds(tb testing.TB) [][]byte {
	tb.Helper()
	var seeds [][]byte
	seed := func(build func(s *seedWriter)) {
		s := newSeedWriter(tb)
		build(s)
		seeds = append(seeds, bytes.Clone(s.buf.Bytes()))
	}

	// Well-formed.
	seed(func(s *seedWriter) { s.request(1, "GET", "/", true) })
	seed(func(s *seedWriter) {
		s.request(1, "POST", "/", false, "content-length", "5")
		s.check(s.fr.WriteData(1, false, []byte("hel")))
		s.check(s.fr.WriteData(1, true, []byte("lo")))
	})
	seed(func(s *seedWriter) {
		s.check(s.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1},
			http2.Setting{ID: http2.SettingMaxFrameSize, Val: 1 << 14},
			http2.Setting{ID: http2.SettingHeaderTableSize, Val: 0}))
		s.request(1, "GET", "/big", true)
		s.check(s.fr.WriteWindowUpdate(0, 1<<20))
		s.check(s.fr.WriteWindowUpdate(1, 1<<20))
		s.check(s.fr.WriteSettingsAck())
	})
	seed(func(s *seedWriter) {
		block := s.block("GET", "/detach", "user-agent", strings.Repeat("a", 40))
		s.check(s.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block[:5], EndStream: true}))
		s.check(s.fr.WriteContinuation(1, false, block[5:10]))
		s.check(s.fr.WriteContinuation(1, true, block[10:]))
	})
	seed(func(s *seedWriter) {
		s.check(s.fr.WritePing(false, [8]byte{1, 2, 3, 4, 5, 6, 7, 8}))
		s.request(1, "POST", "/flush", false)
		s.check(s.fr.WriteData(1, false, []byte("body")))
		s.check(s.fr.WriteRSTStream(1, http2.ErrCodeCancel))
		s.request(3, "GET", "/", true)
		s.check(s.fr.WriteGoAway(3, http2.ErrCodeNo, nil))
	})
	seed(func(s *seedWriter) {
		s.request(1, "POST", "/", false)
		s.check(s.fr.WriteDataPadded(1, false, []byte("data"), []byte{0, 0, 0}))
		s.check(s.fr.WritePriority(1, http2.PriorityParam{StreamDep: 0, Weight: 16}))
		// Trailers end the body.
		s.check(s.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: s.fields("x-trailer", "v"), EndStream: true, EndHeaders: true}))
		s.request(3, "GET", "/panic", true)
	})

	// Broken.
	seed(func(s *seedWriter) { s.check(s.fr.WriteData(1, true, []byte("idle"))) })
	seed(func(s *seedWriter) { s.request(2, "GET", "/", true) })
	seed(func(s *seedWriter) { s.check(s.fr.WriteContinuation(1, true, s.block("GET", "/"))) })
	seed(func(s *seedWriter) {
		s.request(1, "POST", "/", false, "content-length", "1")
		s.check(s.fr.WriteData(1, true, []byte("too long")))
		s.request(1, "GET", "/", true) // a closed stream
	})
	seed(func(s *seedWriter) {
		s.check(s.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: []byte{0xff, 0xff, 0xff}, EndStream: true, EndHeaders: true}))
	})
	seed(func(s *seedWriter) {
		s.check(s.fr.WriteWindowUpdate(0, 1<<31-1))
		s.check(s.fr.WriteWindowUpdate(0, 1<<31-1))
		s.check(s.fr.WritePriority(5, http2.PriorityParam{StreamDep: 5}))
		s.check(s.fr.WriteRSTStream(7, http2.ErrCodeCancel))
	})
	seed(func(s *seedWriter) {
		s.request(1, "GET", "/big", false)
		s.check(s.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1<<31 - 1}))
		s.check(s.fr.WriteWindowUpdate(1, 1<<31-1))
		s.check(s.fr.WriteRawFrame(0x42, 0xff, 1, []byte("unknown frame type")))
	})
	seed(func(s *seedWriter) {
		// A frame header announcing more than the server accepts, and one
		// cut short.
		s.buf.Write([]byte{0xff, 0xff, 0xff, 0, 1, 0, 0, 0, 1})
		s.buf.Write([]byte{0, 0, 8, byte(http2.FramePing), 0, 0, 0, 0, 0, 1})
	})
	return seeds
}

// seedWriter writes frames of a seed with x/net's Framer and one HPACK
// context, as a client would.
type seedWriter struct {
	tb   testing.TB
	buf  bytes.Buffer
	fr   *http2.Framer
	hbuf bytes.Buffer
	enc  *hpack.Encoder
}

func newSeedWriter(tb testing.TB) *seedWriter {
	s := &seedWriter{tb: tb}
	s.fr = http2.NewFramer(&s.buf, nil)
	s.fr.AllowIllegalWrites = true
	s.enc = hpack.NewEncoder(&s.hbuf)
	return s
}

func (s *seedWriter) check(err error) {
	s.tb.Helper()
	if err != nil {
		s.tb.Fatal(err)
	}
}

// fields encodes name-value pairs as a header block fragment.
func (s *seedWriter) fields(kv ...string) []byte {
	s.hbuf.Reset()
	for i := 0; i+1 < len(kv); i += 2 {
		s.check(s.enc.WriteField(hpack.HeaderField{Name: kv[i], Value: kv[i+1]}))
	}
	return bytes.Clone(s.hbuf.Bytes())
}

// block encodes a request's header block.
func (s *seedWriter) block(method, path string, kv ...string) []byte {
	return s.fields(append([]string{":method", method, ":scheme", "https", ":authority", "example.com", ":path", path}, kv...)...)
}

// request writes a request's HEADERS frame.
func (s *seedWriter) request(id uint32, method, path string, end bool, kv ...string) {
	s.check(s.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: s.block(method, path, kv...), EndStream: end, EndHeaders: true}))
}
