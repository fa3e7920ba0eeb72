package check_test

import (
	"strings"
	"testing"

	"github.com/apiloom/apiloom/test/robustness/check"
	"github.com/apiloom/apiloom/test/robustness/history"
)

var watchEtcd = check.Etcd{CompactRev: 3, Changes: []check.Change{
	{Rev: 2, Key: "a/x", Created: true, Value: "w1"},
	{Rev: 3, Key: "b/x", Created: true, Value: "w2"},
	{Rev: 4, Key: "a/x", Value: "w3"},
	{Rev: 5, Key: "b/x", Value: "w4"},
	{Rev: 6, Key: "a/x", Delete: true, Value: "w3"},
	{Rev: 7, Key: "a/y", Created: true, Value: "w5"},
}}

func added(key, value string, rv int64) history.Event {
	return history.Event{Type: history.Added, Key: key, Value: value, RV: rv}
}

func modified(key, value string, rv int64) history.Event {
	return history.Event{Type: history.Modified, Key: key, Value: value, RV: rv}
}

func deleted(key, value string, rv int64) history.Event {
	return history.Event{Type: history.Deleted, Key: key, Value: value, RV: rv}
}

func bookmark(rv int64) history.Event { return history.Event{Type: history.Bookmark, RV: rv} }

func TestWatchStreams(t *testing.T) {
	all := []history.Event{added("a/x", "w1", 2), added("b/x", "w2", 3), modified("a/x", "w3", 4), modified("b/x", "w4", 5), deleted("a/x", "w3", 6), added("a/y", "w5", 7)}
	for _, tc := range []struct {
		name   string
		stream history.Stream
		msg    string // "" when the check passes
	}{
		{"everything", history.Stream{ID: 1, StartRV: 1, Events: all}, ""},
		{"a prefix, with bookmarks", history.Stream{ID: 1, Prefix: "a/", StartRV: 2, Events: []history.Event{
			bookmark(3), modified("a/x", "w3", 4), bookmark(5), deleted("a/x", "w3", 6), added("a/y", "w5", 7), bookmark(9)}}, ""},
		{"ended early", history.Stream{ID: 1, StartRV: 3, Events: all[2:4], End: history.Closed}, ""},
		{"410 below the compaction", history.Stream{ID: 1, StartRV: 2, End: history.Gone}, ""},
		{"dropped event", history.Stream{ID: 1, StartRV: 1, Events: append(append([]history.Event(nil), all[:2]...), all[3:]...)},
			`gap: event 2 (revision 5) without the put of "a/x" at revision 4`},
		{"bookmark past a missing event", history.Stream{ID: 1, Prefix: "a/", StartRV: 4, Events: []history.Event{bookmark(6)}},
			`gap: bookmark at revision 6 (event 0) without the delete of "a/x" at revision 6`},
		{"repeated event", history.Stream{ID: 1, StartRV: 3, Events: []history.Event{all[2], all[2], all[3]}}, "repeated or out of order"},
		{"event below a bookmark", history.Stream{ID: 1, StartRV: 3, Events: []history.Event{bookmark(4), all[2]}}, "repeated or out of order"},
		{"bookmark backwards", history.Stream{ID: 1, StartRV: 3, Events: []history.Event{all[2], bookmark(3)}}, "bookmark at revision 3 after revision 4"},
		{"wrong type", history.Stream{ID: 1, StartRV: 6, Events: []history.Event{modified("a/y", "w5", 7)}}, "etcd has ADDED"},
		{"wrong value", history.Stream{ID: 1, StartRV: 5, Events: []history.Event{deleted("a/x", "w1", 6)}}, `etcd has DELETED "a/x" value "w3"`},
		{"not in history", history.Stream{ID: 1, StartRV: 7, Events: []history.Event{added("a/z", "w6", 8)}}, "not in etcd's history"},
		{"other prefix", history.Stream{ID: 1, Prefix: "a/", StartRV: 2, Events: []history.Event{added("b/x", "w2", 3)}}, "not in etcd's history"},
		{"410 above the compaction", history.Stream{ID: 1, StartRV: 3, End: history.Gone}, "410 Gone after revision 3"},
		{"410 after catching up", history.Stream{ID: 1, StartRV: 1, Events: all[:2], End: history.Gone}, "410 Gone after revision 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := check.WatchStreams(history.History{Streams: []history.Stream{tc.stream}}, watchEtcd)
			if tc.msg == "" {
				if !r.OK() || r.Checked != 1 {
					t.Fatalf("%s", &r)
				}
				return
			}
			if r.OK() || r.Failures[0].Stream != 1 || !strings.Contains(r.String(), tc.msg) {
				t.Fatalf("want a failure of stream 1 with %q, got %s", tc.msg, &r)
			}
		})
	}
}

// TestWatchStreamsGapNamesWriter: a gap names the write whose event the
// stream lacks.
func TestWatchStreamsGapNamesWriter(t *testing.T) {
	h := history.History{
		Operations: []history.Operation{op(9, update("a/x", "w3", 2), 1, 2, ack, acked(4))},
		Streams:    []history.Stream{{ID: 1, Prefix: "a/", StartRV: 2, Events: []history.Event{deleted("a/x", "w3", 6)}}},
	}
	r := check.WatchStreams(h, watchEtcd)
	if len(r.Failures) != 1 || !names(&r, 9) || r.Failures[0].Rev != 4 {
		t.Fatalf("want one failure naming op 9 at revision 4, got %s", &r)
	}
}

func TestWatchStreamsResume(t *testing.T) {
	first := history.Stream{ID: 1, Prefix: "a/", StartRV: 1, Events: []history.Event{added("a/x", "w1", 2), modified("a/x", "w3", 4), bookmark(5)}, End: history.Error}
	for _, tc := range []struct {
		name    string
		resume  history.Stream
		msg     string
		skipped int
	}{
		{"from the bookmark", history.Stream{ID: 2, Resumes: 1, Prefix: "a/", StartRV: 5, Events: []history.Event{deleted("a/x", "w3", 6)}}, "", 0},
		{"from a later revision", history.Stream{ID: 2, Resumes: 1, Prefix: "a/", StartRV: 6}, `skips the delete of "a/x" at revision 6`, 0},
		{"from an earlier revision", history.Stream{ID: 2, Resumes: 1, Prefix: "a/", StartRV: 3, Events: []history.Event{modified("a/x", "w3", 4)}}, `repeats the put of "a/x" at revision 4`, 0},
		{"another selector", history.Stream{ID: 2, Resumes: 1, Prefix: "", StartRV: 5}, `with selector ""`, 0},
		{"an unknown stream", history.Stream{ID: 2, Resumes: 7, Prefix: "a/", StartRV: 5}, "does not hold", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := check.WatchStreams(history.History{Streams: []history.Stream{first, tc.resume}}, watchEtcd)
			if tc.msg == "" {
				if !r.OK() || r.Checked != 2 {
					t.Fatalf("%s", &r)
				}
				return
			}
			if r.OK() || r.Failures[0].Stream != 2 || !strings.Contains(r.String(), tc.msg) {
				t.Fatalf("want a failure of stream 2 with %q, got %s", tc.msg, &r)
			}
		})
	}
}

// TestWatchStreamsBeforeHistory: a stream that starts before etcd's
// history (read after a compaction) cannot be checked, and says so.
func TestWatchStreamsBeforeHistory(t *testing.T) {
	e := watchEtcd
	e.FirstRev, e.Changes = 5, e.Changes[3:]
	h := history.History{Streams: []history.Stream{
		{ID: 1, StartRV: 2, Events: []history.Event{modified("b/x", "w4", 5)}},
		{ID: 2, StartRV: 4, Events: []history.Event{modified("b/x", "w4", 5)}},
	}}
	r := check.WatchStreams(h, e)
	if !r.OK() || r.Checked != 1 || r.Skipped != 1 {
		t.Fatalf("want stream 1 skipped and 2 checked, got %s", &r)
	}
}
