package check

import (
	"github.com/apiloom/apiloom/test/robustness/history"
)

// LostWrites checks durability: every acknowledged write is in etcd's
// history at the revision it was acknowledged with (same key, same kind,
// same value), and no write that failed definitely is in it.
//
// An acknowledged write older than the history (compacted before it was
// read) passes when etcd's final state still holds it, or when a later
// change of its key, made by a write that was not a definite failure,
// superseded it.
//
// Values must be unique per write (the scenario writes the operation id
// into each value) for the second half: a committed value whose only
// writers failed definitely is a failure reported as "failed but
// committed". Deletes carry no value: a committed delete whose only
// possible makers (the deletes of its key whose precondition named the
// version deleted, or none) failed definitely is reported the same way.
func LostWrites(h history.History, e Etcd) Report {
	r := Report{Checker: "LostWrites"}
	byRev := e.byRev()
	final := e.final()
	w := indexWriters(h)
	lastChange := map[string]Change{}
	for _, c := range e.Changes {
		lastChange[c.Key] = c
	}
	for _, op := range h.Operations {
		if !op.Kind.IsWrite() || op.Outcome != history.Acknowledged {
			continue
		}
		r.Checked++
		f := Failure{Ops: []int{op.ID}, Key: op.Key, Rev: op.RV}
		if op.RV == 0 && e.FirstRev <= 1 {
			// A client that could not learn the revision (a delete's answer
			// carries none) found no change in etcd's history for it.
			r.failf(f, "%v: lost, etcd's complete history holds no change for it", op)
			continue
		}
		if op.RV < e.FirstRev {
			if !supersededOrHeld(op, final, lastChange, w) {
				r.failf(f, "%v: compacted, and neither etcd's final state nor a later write holds it", op)
			}
			continue
		}
		c, ok := byRev[op.RV]
		switch {
		case !ok:
			r.failf(f, "%v: lost, etcd's history has no change at revision %d", op, op.RV)
		case c.Key != op.Key:
			r.failf(f, "%v: lost, etcd's revision %d changed key %q instead", op, op.RV, c.Key)
		case c.Delete != (op.Kind == history.Delete):
			r.failf(f, "%v: lost, etcd's revision %d is a %s", op, op.RV, kindOf(c))
		case op.Kind == history.Create && !c.Created:
			r.failf(f, "%v: etcd's revision %d updated an existing key", op, op.RV)
		case op.Kind != history.Delete && c.Value != op.Value:
			r.failf(f, "%v: lost, etcd's revision %d holds value %q", op, op.RV, c.Value)
		}
	}
	prevRev := map[string]int64{} // key -> revision of its last put so far
	for _, c := range e.Changes {
		if c.Delete {
			checkDeleteCommitted(&r, c, prevRev[c.Key], h)
			continue
		}
		prevRev[c.Key] = c.Rev
		ops := w.byValue[c.Value]
		if len(ops) == 0 {
			continue // written by someone the history does not record
		}
		failed := true
		var ids []int
		for _, op := range ops {
			ids = append(ids, op.ID)
			if op.Outcome != history.Failed {
				failed = false
			}
		}
		if failed {
			r.failf(Failure{Ops: ids, Key: c.Key, Rev: c.Rev}, "value %q of key %q committed at revision %d by a write that failed definitely (%d %s)",
				c.Value, c.Key, c.Rev, ops[0].Code, ops[0].Reason)
		}
	}
	return r
}

// checkDeleteCommitted fails r when etcd's delete c of the version at
// prev could only have been made by deletes that failed definitely: the
// deletes of c's key whose precondition named that version (or none).
// A delete that no recorded delete could have made was made by someone
// the history does not record.
func checkDeleteCommitted(r *Report, c Change, prev int64, h history.History) {
	var ids []int
	var first history.Operation
	for _, op := range h.Operations {
		if op.Kind != history.Delete || op.Key != c.Key || (op.PreconditionRV != 0 && op.PreconditionRV != prev) {
			continue
		}
		if op.Outcome != history.Failed {
			return
		}
		if len(ids) == 0 {
			first = op
		}
		ids = append(ids, op.ID)
	}
	if len(ids) > 0 {
		r.failf(Failure{Ops: ids, Key: c.Key, Rev: c.Rev}, "delete of key %q (version %d) committed at revision %d by deletes that failed definitely (%d %s)",
			c.Key, prev, c.Rev, first.Code, first.Reason)
	}
}

// supersededOrHeld reports whether an acknowledged write older than etcd's
// history is still in the final state or was superseded by a later change
// whose writer did not fail definitely.
func supersededOrHeld(op history.Operation, final map[string]history.Item, last map[string]Change, w writers) bool {
	item, held := final[op.Key]
	if held && item.RV == op.RV {
		return op.Kind != history.Delete && item.Value == op.Value
	}
	if !held && op.Kind == history.Delete {
		if c, ok := last[op.Key]; !ok || c.Rev <= op.RV {
			return true // deleted, and nothing recreated it since
		}
	}
	c, ok := last[op.Key]
	if !ok || c.Rev <= op.RV {
		return held && item.RV > op.RV
	}
	if c.Delete {
		return true
	}
	for _, writer := range w.byValue[c.Value] {
		if writer.Outcome != history.Failed {
			return true
		}
	}
	return len(w.byValue[c.Value]) == 0
}

func kindOf(c Change) string {
	if c.Delete {
		return "delete"
	}
	return "put"
}
