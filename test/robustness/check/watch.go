package check

import (
	"fmt"

	"github.com/apiloom/apiloom/test/robustness/history"
)

// WatchStreams checks every watch stream against etcd's history filtered
// by the stream's selector from its start revision: events in revision
// order, none twice, none missing, each with its change's key, type
// (ADDED for a put that created the key, MODIFIED for another put,
// DELETED) and value. A bookmark at revision B promises that every change
// up to B was delivered before it and that no later event is at or below
// B. A stream that resumes another must start at the last revision that
// stream delivered (event or bookmark), so that the two together miss and
// repeat nothing. A stream may end with 410 Gone only when the last
// revision it delivered is older than etcd's compaction.
//
// A stream that ended (or was still open) before the end of etcd's history
// may lack the changes after its last bookmark: nothing promised them. A
// scenario that wants the tail checked waits for a bookmark at etcd's
// final revision before it stops the stream.
func WatchStreams(h history.History, e Etcd) Report {
	r := Report{Checker: "WatchStreams"}
	w := indexWriters(h)
	byID := map[int]*history.Stream{}
	for i := range h.Streams {
		byID[h.Streams[i].ID] = &h.Streams[i]
	}
	for i := range h.Streams {
		s := &h.Streams[i]
		if s.Resumes != 0 {
			checkResume(&r, s, byID[s.Resumes], e)
		}
		if s.End == history.Gone && s.LastRV() >= e.CompactRev {
			r.failf(Failure{Stream: s.ID, Rev: s.LastRV()}, "410 Gone after revision %d, not older than the compaction at %d (%s)", s.LastRV(), e.CompactRev, s.Err)
		}
		if e.FirstRev > 1 && s.StartRV < e.FirstRev-1 {
			r.Skipped++
			r.Notes = append(r.Notes, fmt.Sprintf("stream %d starts at revision %d, before etcd's history (%d)", s.ID, s.StartRV, e.FirstRev))
			continue
		}
		r.Checked++
		checkStream(&r, s, e, func(c Change) []int { return w.of(c, h) })
	}
	return r
}

// checkStream checks one stream; writersOf names the operations that may
// have made a change, for the report.
func checkStream(r *Report, s *history.Stream, e Etcd, writersOf func(Change) []int) {
	want := e.matching(s.Prefix, s.StartRV)
	next := 0 // want[next] is the next change the stream owes
	last := s.StartRV
	missing := func(upTo int64, what string) {
		for next < len(want) && want[next].Rev <= upTo {
			c := want[next]
			r.failf(Failure{Ops: writersOf(c), Stream: s.ID, Key: c.Key, Rev: c.Rev}, "gap: %s without the %s of %q at revision %d", what, kindOf(c), c.Key, c.Rev)
			next++
		}
	}
	for i, ev := range s.Events {
		if ev.Type == history.Bookmark {
			if ev.RV < last {
				r.failf(Failure{Stream: s.ID, Rev: ev.RV}, "event %d: bookmark at revision %d after revision %d", i, ev.RV, last)
				continue
			}
			missing(ev.RV, fmt.Sprintf("bookmark at revision %d (event %d)", ev.RV, i))
			last = ev.RV
			continue
		}
		if ev.RV <= last {
			r.failf(Failure{Stream: s.ID, Key: ev.Key, Rev: ev.RV}, "event %d: %s %q at revision %d repeated or out of order, after revision %d", i, ev.Type, ev.Key, ev.RV, last)
			continue
		}
		missing(ev.RV-1, fmt.Sprintf("event %d (revision %d)", i, ev.RV))
		last = ev.RV
		if next >= len(want) || want[next].Rev != ev.RV {
			r.failf(Failure{Stream: s.ID, Key: ev.Key, Rev: ev.RV}, "event %d: %s %q at revision %d is not in etcd's history under %q", i, ev.Type, ev.Key, ev.RV, s.Prefix)
			continue
		}
		c := want[next]
		next++
		if wantType := eventType(c); ev.Key != c.Key || ev.Type != wantType || ev.Value != c.Value {
			r.failf(Failure{Stream: s.ID, Key: ev.Key, Rev: ev.RV}, "event %d: %s %q value %q at revision %d, etcd has %s %q value %q",
				i, ev.Type, ev.Key, ev.Value, ev.RV, wantType, c.Key, c.Value)
		}
	}
}

// checkResume checks that s starts where the stream it resumes stopped.
func checkResume(r *Report, s, prev *history.Stream, e Etcd) {
	if prev == nil {
		r.failf(Failure{Stream: s.ID}, "resumes stream %d, which the history does not hold", s.Resumes)
		return
	}
	if s.Prefix != prev.Prefix {
		r.failf(Failure{Stream: s.ID}, "resumes stream %d with selector %q, not %q", prev.ID, s.Prefix, prev.Prefix)
	}
	from, to, what := prev.LastRV(), s.StartRV, "skips"
	if to < from {
		from, to, what = to, from, "repeats"
	}
	for _, c := range e.matching(s.Prefix, from) {
		if c.Rev > to {
			break
		}
		r.failf(Failure{Stream: s.ID, Key: c.Key, Rev: c.Rev}, "resumes stream %d (last revision %d) from revision %d: %s the %s of %q at revision %d",
			prev.ID, prev.LastRV(), s.StartRV, what, kindOf(c), c.Key, c.Rev)
	}
}

func eventType(c Change) history.EventType {
	switch {
	case c.Delete:
		return history.Deleted
	case c.Created:
		return history.Added
	}
	return history.Modified
}
