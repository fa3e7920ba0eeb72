package cache

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/watch"
)

// keysOf lists v's keys in r, marking items with their version ("a@1").
func keysOf(v view[*widget], r keyRange) string {
	var out []string
	v.ascend(r, func(i *item[*widget]) bool {
		out = append(out, i.key+"@"+string(i.frameType))
		return true
	})
	return strings.Join(out, " ")
}

func ver(key, version string) *item[*widget] {
	return &item[*widget]{key: key, frameType: watch.EventType(version)}
}

func TestViewUndo(t *testing.T) {
	// State at revision 10: a/x@1 a/y@1 b/z@1. Then:
	//   11 ADDED a/w, 12 MODIFIED a/y (→2), 13 DELETED b/z,
	//   14 ADDED c/q, 15 MODIFIED a/y (→3), 16 DELETED a/x
	x1, y1, z1 := ver("a/x", "1"), ver("a/y", "1"), ver("b/z", "1")
	w1, y2, q1, y3 := ver("a/w", "1"), ver("a/y", "2"), ver("c/q", "1"), ver("a/y", "3")
	events := []*event[*widget]{
		{rev: 11, key: "a/w", cur: w1},
		{rev: 12, key: "a/y", prev: y1, cur: y2},
		{rev: 13, key: "b/z", prev: z1},
		{rev: 14, key: "c/q", cur: q1},
		{rev: 15, key: "a/y", prev: y2, cur: y3},
		{rev: 16, key: "a/x", prev: x1},
	}
	now := newTree[*widget]()
	for _, i := range []*item[*widget]{w1, y3, q1} {
		now.ReplaceOrInsert(i)
	}

	at := func(rev int64) view[*widget] {
		v := view[*widget]{tree: now, rev: rev}
		var undo []*event[*widget]
		for _, e := range events {
			if e.rev > rev {
				undo = append(undo, e)
			}
		}
		v.undoEvents(undo)
		return v
	}
	for _, tc := range []struct {
		rev  int64
		r    keyRange
		want string
	}{
		{16, keyRange{}, "a/w@1 a/y@3 c/q@1"},
		{10, keyRange{}, "a/x@1 a/y@1 b/z@1"},
		{11, keyRange{}, "a/w@1 a/x@1 a/y@1 b/z@1"},
		{12, keyRange{}, "a/w@1 a/x@1 a/y@2 b/z@1"},
		{13, keyRange{}, "a/w@1 a/x@1 a/y@2"},
		{15, keyRange{}, "a/w@1 a/x@1 a/y@3 c/q@1"},
		{10, namespaceRange("a"), "a/x@1 a/y@1"},
		{10, namespaceRange("b"), "b/z@1"},
		{13, namespaceRange("b"), ""},
		{14, namespaceRange("c"), "c/q@1"},
		{10, keyRange{from: "a/x\x00"}, "a/y@1 b/z@1"},
		{12, keyRange{from: "a/w\x00", to: "b0"}, "a/x@1 a/y@2 b/z@1"},
	} {
		if got := keysOf(at(tc.rev), tc.r); got != tc.want {
			t.Errorf("at %d in %q: %q, want %q", tc.rev, tc.r, got, tc.want)
		}
	}

	// Stopping early stops both the tree and the undone keys.
	v := at(10)
	var n int
	v.ascend(keyRange{}, func(*item[*widget]) bool { n++; return n < 2 })
	if n != 2 {
		t.Errorf("ascend went on after fn returned false: %d calls", n)
	}
}

func TestNamespaceRange(t *testing.T) {
	r := namespaceRange("a")
	for key, in := range map[string]bool{"a/x": true, "a/": true, "ab/x": false, "a0": false, "b/x": false, "/x": false} {
		if r.contains(key) != in {
			t.Errorf("namespace a contains %q: %v", key, !in)
		}
	}
	if all := namespaceRange(""); !all.contains("") || !all.contains("zz/z") {
		t.Error("the empty namespace is not every key")
	}
}
