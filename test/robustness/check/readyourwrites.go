package check

import (
	"fmt"
	"sort"
	"strings"

	"github.com/apiloom/apiloom/test/robustness/history"
)

// ReadYourWrites checks that a consistent read (get or list with
// resourceVersion "") sees every write acknowledged before it was called,
// whichever replica acknowledged the write and whichever serves the read:
// a write acknowledged at revision r by replica A, then a consistent read
// on replica B called after that acknowledgement, must answer revision r
// or later. For a list of a prefix holding the write's key: the list's
// revision is at least r, and the key's item is at revision r or later,
// or absent because etcd deleted the key after r (at or below the list's
// revision). For a get of the write's key: the object is at revision r or
// later, or absent because the write was a delete or etcd deleted the key
// after r.
//
// Linearizable checks the same reads per key against the writes' order;
// this checker names the replicas, checks a list's revision against
// writes of every key under its prefix, and needs no search, so it holds
// on histories too long for porcupine. Writes whose revision the client
// does not know (RV 0) are left out.
func ReadYourWrites(h history.History, e Etcd) Report {
	r := Report{Checker: "ReadYourWrites"}
	var writes, reads []history.Operation
	for _, op := range h.Operations {
		switch {
		case op.Outcome != history.Acknowledged:
		case op.Kind.IsWrite() && op.RV > 0:
			writes = append(writes, op)
		case (op.Kind == history.Get || op.Kind == history.List) && op.ReadRV == "":
			reads = append(reads, op)
		}
	}
	sort.SliceStable(writes, func(i, j int) bool { return writes[i].Return < writes[j].Return })
	sort.SliceStable(reads, func(i, j int) bool { return reads[i].Call < reads[j].Call })
	deletes := map[string][]int64{} // key -> etcd's revisions deleting it, ascending
	for _, c := range e.Changes {
		if c.Delete {
			deletes[c.Key] = append(deletes[c.Key], c.Rev)
		}
	}
	// deletedIn reports whether etcd deleted key at a revision in (from, to].
	deletedIn := func(key string, from, to int64) bool {
		revs := deletes[key]
		i := sort.Search(len(revs), func(i int) bool { return revs[i] > from })
		return i < len(revs) && revs[i] <= to
	}

	latest := map[string]history.Operation{} // key -> the acknowledged write of the highest revision returned so far
	next, crossReplica := 0, 0
	for _, rd := range reads {
		for next < len(writes) && writes[next].Return < rd.Call {
			w := writes[next]
			if cur, ok := latest[w.Key]; !ok || w.RV > cur.RV {
				latest[w.Key] = w
			}
			next++
		}
		var owed []history.Operation // the writes rd must see, by key
		switch rd.Kind {
		case history.Get:
			if w, ok := latest[rd.Key]; ok {
				owed = append(owed, w)
			}
		case history.List:
			for k, w := range latest {
				if strings.HasPrefix(k, rd.Key) {
					owed = append(owed, w)
				}
			}
			sort.Slice(owed, func(i, j int) bool { return owed[i].Key < owed[j].Key })
		}
		if len(owed) == 0 {
			continue
		}
		r.Checked++
		cross := false
		for _, w := range owed {
			cross = cross || w.Replica != rd.Replica
			if msg := missedWrite(rd, w, deletedIn); msg != "" {
				r.failf(Failure{Ops: []int{w.ID, rd.ID}, Key: w.Key, Rev: w.RV},
					"%v (replica %d), called after %v (replica %d) returned: %s", rd, rd.Replica, w, w.Replica, msg)
			}
		}
		if cross {
			crossReplica++
		}
	}
	r.Notes = append(r.Notes, fmt.Sprintf("%d of %d reads checked followed a write acknowledged by another replica", crossReplica, r.Checked))
	return r
}

// missedWrite says how read rd fails to see write w, or "" if it sees it.
func missedWrite(rd, w history.Operation, deletedIn func(key string, from, to int64) bool) string {
	if rd.Kind == history.Get {
		switch {
		case rd.Found && rd.RV < w.RV:
			return fmt.Sprintf("it read revision %d, older than the write's %d", rd.RV, w.RV)
		case !rd.Found && w.Kind != history.Delete && !deletedIn(w.Key, w.RV, 1<<62):
			return fmt.Sprintf("it found no object, and etcd never deleted %q after revision %d", w.Key, w.RV)
		}
		return ""
	}
	if rd.RV < w.RV {
		return fmt.Sprintf("the list is at revision %d, older than the write's %d", rd.RV, w.RV)
	}
	for _, it := range rd.Items {
		if it.Key == w.Key {
			if it.RV < w.RV {
				return fmt.Sprintf("the list holds %q at revision %d, older than the write's %d", it.Key, it.RV, w.RV)
			}
			return ""
		}
	}
	if w.Kind != history.Delete && !deletedIn(w.Key, w.RV, rd.RV) {
		return fmt.Sprintf("the list lacks %q, and etcd did not delete it in (%d, %d]", w.Key, w.RV, rd.RV)
	}
	return ""
}
