package check

import (
	"sort"
	"strings"

	"github.com/apiloom/apiloom/test/robustness/history"
)

// Change is one change in etcd's history, with the etcd key mapped to
// the history's object key and the stored object mapped to the history's
// value.
type Change struct {
	// Rev is the change's revision (the key's ModRevision).
	Rev int64
	Key string
	// Delete: the change deleted the key.
	Delete bool
	// Created: a put that created the key (CreateRevision == Rev).
	Created bool
	// Value is the value put; for a delete, the value deleted (etcd's
	// PrevKV), which a DELETED watch event carries.
	Value string
}

// Etcd is what etcd holds at the end of a scenario.
type Etcd struct {
	// Changes is etcd's history of the keys the scenario uses, in
	// revision order: every change from FirstRev on.
	Changes []Change
	// FirstRev is the first revision Changes covers completely (changes
	// before it had been compacted when the history was read); 0 or 1
	// when it is complete.
	FirstRev int64
	// CompactRev is the latest compaction's revision (0: none).
	CompactRev int64
	// Final is the final state, key to item; nil to derive it from a
	// complete Changes.
	Final map[string]history.Item
}

// final returns the final state: Final, or the replay of Changes.
func (e *Etcd) final() map[string]history.Item {
	if e.Final != nil {
		return e.Final
	}
	state := map[string]history.Item{}
	for _, c := range e.Changes {
		if c.Delete {
			delete(state, c.Key)
		} else {
			state[c.Key] = history.Item{Key: c.Key, Value: c.Value, RV: c.Rev}
		}
	}
	return state
}

// byRev returns the changes indexed by revision.
func (e *Etcd) byRev() map[int64]Change {
	m := make(map[int64]Change, len(e.Changes))
	for _, c := range e.Changes {
		m[c.Rev] = c
	}
	return m
}

// matching returns the changes under prefix after rev, in order.
func (e *Etcd) matching(prefix string, after int64) []Change {
	i := sort.Search(len(e.Changes), func(i int) bool { return e.Changes[i].Rev > after })
	var out []Change
	for _, c := range e.Changes[i:] {
		if strings.HasPrefix(c.Key, prefix) {
			out = append(out, c)
		}
	}
	return out
}

// writers indexes a history's writes: by the value they write, and the
// acknowledged ones by their revision.
type writers struct {
	byValue map[string][]history.Operation
	byRev   map[int64]history.Operation
}

func indexWriters(h history.History) writers {
	w := writers{byValue: map[string][]history.Operation{}, byRev: map[int64]history.Operation{}}
	for _, op := range h.Operations {
		if !op.Kind.IsWrite() {
			continue
		}
		if op.Kind != history.Delete {
			w.byValue[op.Value] = append(w.byValue[op.Value], op)
		}
		if _, taken := w.byRev[op.RV]; !taken && op.Outcome == history.Acknowledged {
			w.byRev[op.RV] = op // the first: a no-op update answers the revision of the write before it
		}
	}
	return w
}

// of returns the ids of the operations that may have made change c: the
// acknowledged write at its revision, or the writes of its value, or the
// deletes of its key whose outcome is not known.
func (w writers) of(c Change, h history.History) []int {
	if op, ok := w.byRev[c.Rev]; ok {
		return []int{op.ID}
	}
	var ids []int
	if !c.Delete {
		for _, op := range w.byValue[c.Value] {
			ids = append(ids, op.ID)
		}
		return ids
	}
	for _, op := range h.Operations {
		if op.Kind == history.Delete && op.Key == c.Key && op.Outcome != history.Acknowledged && op.Outcome != history.Failed {
			ids = append(ids, op.ID)
		}
	}
	return ids
}
