package sim

import (
	"strings"

	"github.com/apiloom/apiloom/test/robustness/check"
	"github.com/apiloom/apiloom/test/robustness/history"
)

var prefixes = []string{"", "a/", "b/"}

// streams records cfg.Streams watch streams of a correct server, fed from
// the store's log: random selector and start at or after the compaction,
// bookmarks between events, some cut and resumed from their last
// revision, and one 410 for a start below the compaction.
func (s *sim) streams(compact int64) {
	for i := range s.cfg.Streams {
		prefix := prefixes[s.rnd.IntN(len(prefixes))]
		if i == 0 && compact > 1 {
			w := s.rec.Watch(100+i, prefix, compact-1-s.rnd.Int64N(compact-1), 0)
			w.End(history.Gone, errTooOld)
			continue
		}
		start := compact + s.rnd.Int64N(s.st.rev-compact+1)
		var events []history.Event
		last := start
		for _, c := range s.st.changes {
			if c.Rev <= start || !strings.HasPrefix(c.Key, prefix) {
				continue
			}
			if c.Rev-1 > last && s.rnd.IntN(4) == 0 {
				events = append(events, history.Event{Type: history.Bookmark, RV: last + s.rnd.Int64N(c.Rev-last)})
			}
			events = append(events, history.Event{Type: eventType(c), Key: c.Key, Value: c.Value, RV: c.Rev})
			last = c.Rev
		}
		if s.rnd.IntN(2) == 0 {
			events = append(events, history.Event{Type: history.Bookmark, RV: s.st.rev})
		}
		if s.cfg.Bug == DropWatchEvent && !s.planted.Done {
			events = s.dropOne(events, prefix, start)
		}
		s.record(100+i, prefix, start, events)
	}
}

// record records a stream's events, cut at a random point and resumed
// from the last revision delivered half of the time.
func (s *sim) record(client int, prefix string, start int64, events []history.Event) {
	cut := len(events)
	if len(events) > 1 && s.rnd.IntN(2) == 0 {
		cut = 1 + s.rnd.IntN(len(events)-1)
	}
	w := s.rec.Watch(client, prefix, start, 0)
	for _, e := range events[:cut] {
		w.Observe(e)
	}
	if s.planted.Done && s.planted.Stream == -1 {
		s.planted.Stream = w.ID()
	}
	if cut == len(events) {
		w.End(history.Closed, nil)
		return
	}
	w.End(history.Error, errReset)
	resumeFrom := events[cut-1].RV
	r := s.rec.Watch(client, prefix, resumeFrom, w.ID())
	for _, e := range events[cut:] {
		r.Observe(e)
	}
	r.End(history.Closed, nil)
	if s.planted.Stream == w.ID() && s.planted.Rev > resumeFrom {
		s.planted.Stream = r.ID()
	}
}

// dropOne removes an event that a later event or bookmark follows.
func (s *sim) dropOne(events []history.Event, prefix string, start int64) []history.Event {
	var candidates []int
	for i, e := range events[:max(0, len(events)-1)] {
		if e.Type != history.Bookmark {
			candidates = append(candidates, i)
		}
	}
	if len(candidates) == 0 {
		return events
	}
	i := candidates[s.rnd.IntN(len(candidates))]
	e := events[i]
	s.planted = Planted{Done: true, Stream: -1, Key: e.Key, Rev: e.RV}
	return append(events[:i:i], events[i+1:]...)
}

func eventType(c check.Change) history.EventType {
	switch {
	case c.Delete:
		return history.Deleted
	case c.Created:
		return history.Added
	}
	return history.Modified
}

// informers records cfg.Informers informers' final stores: a list at a
// random revision, then every later change under the prefix applied.
// With InformerMissesDelete, one informer skips the delete that removed a
// key for good.
func (s *sim) informers() {
	lastChange := map[string]int64{}
	for _, c := range s.st.changes {
		lastChange[c.Key] = c.Rev
	}
	for i := range s.cfg.Informers {
		prefix := prefixes[s.rnd.IntN(len(prefixes))]
		listRV := s.rnd.Int64N(s.st.rev + 1)
		items := s.st.stateAt(listRV, prefix)
		for _, c := range s.st.changes {
			if c.Rev <= listRV || !strings.HasPrefix(c.Key, prefix) {
				continue
			}
			if c.Delete && s.cfg.Bug == InformerMissesDelete && !s.planted.Done && lastChange[c.Key] == c.Rev {
				s.planted = Planted{Done: true, Key: c.Key, Rev: c.Rev}
				continue
			}
			if c.Delete {
				delete(items, c.Key)
			} else {
				items[c.Key] = history.Item{Key: c.Key, Value: c.Value, RV: c.Rev}
			}
		}
		s.rec.Informer(history.InformerState{Client: 200 + i, Prefix: prefix, Items: items})
	}
}
