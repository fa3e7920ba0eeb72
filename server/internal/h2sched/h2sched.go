// Package h2sched is an HTTP/2 write scheduler for servers that hold many
// streams on one connection, as a watch server does: thousands of watches
// multiplexed over a few client connections.
//
// x/net/http2's round-robin scheduler looks at every open stream on each
// Pop until it finds one with a frame to send, so fanning one event out to
// N streams of a connection costs O(N²); at a thousand watches per
// connection that scan was a quarter of the server's CPU. This scheduler
// keeps a FIFO of the streams that have frames waiting and pops from its
// head: O(1) per frame when the head stream may send, with the same
// fairness (one frame per stream per turn) and the same handling of
// control frames, which go first.
package h2sched

import (
	"math"
	"reflect"

	"golang.org/x/net/http2"
)

// Supported reports whether this x/net version lets the scheduler tell
// control frames apart; when it does not, leave http2.Server's default.
func Supported() bool { return streamField >= 0 }

// New returns a scheduler for http2.Server.NewWriteScheduler. Use it only
// when Supported.
func New() http2.WriteScheduler {
	return &scheduler{streams: make(map[uint32]*streamQueue)}
}

// streamField is the index of FrameWriteRequest's unexported stream field,
// or -1. A control frame (SETTINGS, PING, GOAWAY, RST_STREAM) has none;
// x/net's schedulers send those first, and so must this one, but the
// exported API has no way to tell. Reading the field through reflect is
// read-only and checked once; TestControlFramesAreRecognised fails if an
// x/net upgrade renames it, and Supported turns false.
var streamField = func() int {
	f, ok := reflect.TypeFor[http2.FrameWriteRequest]().FieldByName("stream")
	if !ok || f.Type.Kind() != reflect.Pointer || len(f.Index) != 1 {
		return -1
	}
	return f.Index[0]
}()

func isControl(wr *http2.FrameWriteRequest) bool {
	return reflect.ValueOf(wr).Elem().Field(streamField).IsNil()
}

// scheduler is used by one connection's serve loop only; it needs no lock.
type scheduler struct {
	control queue
	streams map[uint32]*streamQueue
	// ready is a FIFO of streams with frames waiting, linked through
	// streamQueue.next; a stream is in it at most once.
	head, tail *streamQueue
	ready      int
}

// streamQueue is one open stream's pending frames.
type streamQueue struct {
	frames queue
	next   *streamQueue
	queued bool // in the ready FIFO
}

func (s *scheduler) OpenStream(id uint32, _ http2.OpenStreamOptions) {
	s.streams[id] = &streamQueue{}
}

// CloseStream drops the stream and any frames it still had, as x/net's
// schedulers do: nothing more may be written to a closed stream.
func (s *scheduler) CloseStream(id uint32) {
	q, ok := s.streams[id]
	if !ok {
		return
	}
	delete(s.streams, id)
	q.frames = queue{}
	if q.queued {
		s.unlink(q)
	}
}

func (s *scheduler) AdjustStream(uint32, http2.PriorityParam) {}

func (s *scheduler) Push(wr http2.FrameWriteRequest) {
	if isControl(&wr) {
		s.control.push(wr)
		return
	}
	q, ok := s.streams[wr.StreamID()]
	if !ok {
		// A frame for a stream already closed (it is not DATA): let it go
		// out like a control frame, as x/net does.
		s.control.push(wr)
		return
	}
	q.frames.push(wr)
	if !q.queued {
		s.enqueue(q)
	}
}

// Pop returns control frames first, then one frame from the first ready
// stream whose flow-control window allows it; that stream moves to the back.
func (s *scheduler) Pop() (http2.FrameWriteRequest, bool) {
	if !s.control.empty() {
		wr, _ := s.control.consume(math.MaxInt32)
		return wr, true
	}
	// Visit each ready stream at most once: a stream blocked by flow
	// control moves to the back and the next one is tried.
	for n := s.ready; n > 0; n-- {
		q := s.head
		s.dequeueHead()
		wr, ok := q.frames.consume(math.MaxInt32)
		if !q.frames.empty() {
			s.enqueue(q)
		}
		if ok {
			return wr, true
		}
	}
	return http2.FrameWriteRequest{}, false
}

func (s *scheduler) enqueue(q *streamQueue) {
	q.queued, q.next = true, nil
	s.ready++
	if s.tail == nil {
		s.head, s.tail = q, q
		return
	}
	s.tail.next, s.tail = q, q
}

func (s *scheduler) dequeueHead() {
	q := s.head
	s.head, q.next, q.queued = q.next, nil, false
	s.ready--
	if s.head == nil {
		s.tail = nil
	}
}

// unlink removes q from the ready FIFO; O(ready), but only when a stream
// closes with frames still queued.
func (s *scheduler) unlink(q *streamQueue) {
	var prev *streamQueue
	for cur := s.head; cur != nil; prev, cur = cur, cur.next {
		if cur != q {
			continue
		}
		if prev == nil {
			s.head = cur.next
		} else {
			prev.next = cur.next
		}
		if s.tail == cur {
			s.tail = prev
		}
		q.next, q.queued = nil, false
		s.ready--
		return
	}
}

// queue is a FIFO of frames.
type queue struct {
	s []http2.FrameWriteRequest
}

func (q *queue) empty() bool { return len(q.s) == 0 }

func (q *queue) push(wr http2.FrameWriteRequest) { q.s = append(q.s, wr) }

// consume takes up to n flow-control bytes from the first frame: the whole
// frame, or its head when the window or frame size allows less. It reports
// false when flow control allows nothing.
func (q *queue) consume(n int32) (http2.FrameWriteRequest, bool) {
	if len(q.s) == 0 {
		return http2.FrameWriteRequest{}, false
	}
	consumed, rest, parts := q.s[0].Consume(n)
	switch parts {
	case 0:
		return http2.FrameWriteRequest{}, false
	case 1:
		q.s[0] = http2.FrameWriteRequest{}
		q.s = q.s[1:]
		if len(q.s) == 0 {
			q.s = nil // let the backing array go; most streams idle
		}
	case 2:
		q.s[0] = rest
	}
	return consumed, true
}
