package cache

import (
	"slices"
	"testing"
)

// ev is a history event at rev for the tests of history and view. Like
// every event, it carries an item.
func ev(rev int64) *event[*widget] { return &event[*widget]{rev: rev, src: &item[*widget]{}} }

func revsOf(h *history[*widget]) []int64 {
	var out []int64
	for seq := h.first; seq < h.next; seq++ {
		out = append(out, h.at(seq).rev)
	}
	return out
}

func TestHistoryWindow(t *testing.T) {
	h := newHistory[*widget](3, 10)
	if h.len() != 0 || h.start != 10 || h.seqAfter(10) != 0 {
		t.Fatalf("empty history: len %d start %d", h.len(), h.start)
	}
	for _, rev := range []int64{12, 15, 16} {
		if h.append(ev(rev)) {
			t.Fatalf("append %d evicted with room left", rev)
		}
	}
	if got := revsOf(h); !slices.Equal(got, []int64{12, 15, 16}) || h.start != 10 {
		t.Fatalf("after 3: %v start %d", got, h.start)
	}
	// Full: the oldest event makes room and the window starts at it.
	if !h.append(ev(20)) {
		t.Fatal("append to a full history did not evict")
	}
	if got := revsOf(h); !slices.Equal(got, []int64{15, 16, 20}) || h.start != 12 || h.first != 1 || h.next != 4 {
		t.Fatalf("after eviction: %v start %d first %d next %d", got, h.start, h.first, h.next)
	}
	if h.ring[0] != h.at(3) {
		t.Fatal("sequence 3 does not reuse slot 0")
	}
	for i := 0; i < 10; i++ {
		h.append(ev(int64(21 + i)))
	}
	if got := revsOf(h); !slices.Equal(got, []int64{28, 29, 30}) || h.start != 27 {
		t.Fatalf("after wrapping: %v start %d", got, h.start)
	}
}

func TestHistorySeqAfter(t *testing.T) {
	h := newHistory[*widget](8, 0)
	for _, rev := range []int64{3, 5, 9, 10, 14} {
		h.append(ev(rev))
	}
	for _, tc := range []struct {
		rev  int64
		want uint64
	}{
		{0, 0}, {2, 0}, {3, 1}, {4, 1}, {5, 2}, {8, 2}, {9, 3}, {10, 4}, {13, 4}, {14, 5}, {100, 5},
	} {
		if got := h.seqAfter(tc.rev); got != tc.want {
			t.Errorf("seqAfter(%d) = %d, want %d", tc.rev, got, tc.want)
		}
	}
	// Sequence numbers are absolute: still right after wrapping.
	for _, rev := range []int64{20, 21, 22, 23, 24, 25} {
		h.append(ev(rev))
	}
	if h.first != 3 || h.start != 9 {
		t.Fatalf("first %d start %d", h.first, h.start)
	}
	if got := h.seqAfter(9); got != 3 {
		t.Errorf("seqAfter(9) = %d, want 3", got)
	}
	if got := h.seqAfter(22); got != 8 || h.at(got).rev != 23 {
		t.Errorf("seqAfter(22) = %d, want 8", got)
	}
}

func TestHistoryReset(t *testing.T) {
	h := newHistory[*widget](4, 0)
	for _, rev := range []int64{1, 2, 3, 4, 5} {
		h.append(ev(rev))
	}
	h.reset(40)
	if h.len() != 0 || h.start != 40 || h.first != 5 || h.next != 5 {
		t.Fatalf("after reset: len %d start %d first %d next %d", h.len(), h.start, h.first, h.next)
	}
	for i, e := range h.ring {
		if e != nil {
			t.Errorf("slot %d still holds revision %d", i, e.rev)
		}
	}
	h.append(ev(41))
	if got := revsOf(h); !slices.Equal(got, []int64{41}) || h.seqAfter(40) != 5 {
		t.Fatalf("after reset and append: %v", got)
	}
}
