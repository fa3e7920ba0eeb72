package cache

import (
	"sort"

	"github.com/apiloom/apiloom/server/resource"
)

// history is the window of recent events: a ring buffer in which every
// event has a sequence number, one more than its predecessor's. Watchers
// are sequence numbers into it. Revisions grow with sequence numbers, so a
// revision is found by binary search.
//
// The window holds every event with a revision in (start, head], where
// head is the cache's revision: appending past capacity drops the oldest
// event and moves start to its revision.
//
// history is not safe for concurrent use; Cache.mu guards it.
type history[O resource.Object] struct {
	ring  []*event[O]
	first uint64 // sequence number of the oldest event held
	next  uint64 // sequence number the next event gets
	start int64
}

func newHistory[O resource.Object](capacity int, start int64) *history[O] {
	return &history[O]{ring: make([]*event[O], capacity), start: start}
}

// len is the number of events held.
func (h *history[O]) len() int { return int(h.next - h.first) }

// append adds e, whose revision must be above every held event's, and
// reports whether an old event had to make room.
func (h *history[O]) append(e *event[O]) (evicted bool) {
	n := uint64(len(h.ring))
	if h.next-h.first == n {
		old := &h.ring[h.first%n]
		h.start = (*old).rev
		(*old).leftWindow()
		*old = nil
		h.first++
		evicted = true
	}
	h.ring[h.next%n] = e
	h.next++
	return evicted
}

// at returns the event with sequence number seq; first <= seq < next.
func (h *history[O]) at(seq uint64) *event[O] {
	return h.ring[seq%uint64(len(h.ring))]
}

// seqAfter returns the sequence number of the first held event with a
// revision above rev, or next if there is none. Callers check rev >= start
// first: below it, events may be missing.
func (h *history[O]) seqAfter(rev int64) uint64 {
	i := sort.Search(h.len(), func(i int) bool { return h.at(h.first+uint64(i)).rev > rev })
	return h.first + uint64(i)
}

// reset empties the window after a relist at revision start: events up to
// start are unknown, events after it will be appended. Sequence numbers go
// on growing, so no old cursor points into the new window by accident.
func (h *history[O]) reset(start int64) {
	for seq := h.first; seq < h.next; seq++ {
		h.at(seq).leftWindow()
	}
	clear(h.ring)
	h.first = h.next
	h.start = start
}
