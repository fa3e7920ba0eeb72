package sim

import (
	"sort"
	"strings"

	"github.com/apiloom/apiloom/test/robustness/check"
	"github.com/apiloom/apiloom/test/robustness/history"
)

// version is one value of a key, with the operation that wrote it.
type version struct {
	item history.Item
	op   int
}

// store is the fake linearizable store: etcd's semantics for one key per
// revision.
type store struct {
	rev     int64
	state   map[string]history.Item
	changes []check.Change
	// versions keeps each key's values, oldest first, for the stale read
	// bug.
	versions map[string][]version
}

func newStore() *store {
	return &store{state: map[string]history.Item{}, versions: map[string][]version{}}
}

// write applies a write if it can and returns the answer the server would
// give.
func (s *store) write(op int, req history.Request, commit bool) (history.Outcome, history.Response) {
	cur, exists := s.state[req.Key]
	switch {
	case req.Kind == history.Apply: // forced: creates or updates, no precondition
	case req.Kind == history.Create && exists:
		return history.Failed, history.Response{Code: 409, Reason: "AlreadyExists"}
	case req.Kind != history.Create && !exists:
		return history.Failed, history.Response{Code: 404, Reason: "NotFound"}
	case req.Kind != history.Create && req.PreconditionRV != 0 && req.PreconditionRV != cur.RV:
		return history.Failed, history.Response{Code: 409, Reason: "Conflict"}
	}
	rev := s.rev + 1
	if !commit {
		return history.Acknowledged, history.Response{RV: rev}
	}
	s.rev = rev
	c := check.Change{Rev: rev, Key: req.Key}
	switch req.Kind {
	case history.Delete:
		c.Delete, c.Value = true, cur.Value
		delete(s.state, req.Key)
	default:
		c.Created, c.Value = !exists, req.Value
		it := history.Item{Key: req.Key, Value: req.Value, RV: rev}
		s.state[req.Key] = it
		s.versions[req.Key] = append(s.versions[req.Key], version{item: it, op: op})
	}
	s.changes = append(s.changes, c)
	return history.Acknowledged, history.Response{RV: rev}
}

func (s *store) get(key string) history.Response {
	it, ok := s.state[key]
	if !ok {
		return history.Response{Code: 404, Reason: "NotFound"}
	}
	return history.Response{Found: true, Read: it.Value, RV: it.RV}
}

func (s *store) list(prefix string) history.Response {
	var items []history.Item
	for k, it := range s.state {
		if strings.HasPrefix(k, prefix) {
			items = append(items, it)
		}
	}
	sort.Slice(items, func(i, j int) bool { return items[i].Key < items[j].Key })
	return history.Response{Items: items, RV: s.rev}
}

// stateAt replays the log up to rev, under prefix.
func (s *store) stateAt(rev int64, prefix string) map[string]history.Item {
	state := map[string]history.Item{}
	for _, c := range s.changes {
		if c.Rev > rev {
			break
		}
		if !strings.HasPrefix(c.Key, prefix) {
			continue
		}
		if c.Delete {
			delete(state, c.Key)
		} else {
			state[c.Key] = history.Item{Key: c.Key, Value: c.Value, RV: c.Rev}
		}
	}
	return state
}
