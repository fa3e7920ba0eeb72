package check

import (
	"fmt"
	"sort"
	"strings"

	"github.com/apiloom/apiloom/test/robustness/history"
)

// Snapshots checks that every read, consistent or not (resourceVersion
// "0" reads may be stale, but not made up), answered a state etcd had: a
// get's object is the put at its revision, and a list at revision L holds
// exactly etcd's state at L under its prefix (no key missing or extra,
// each at its revision and value). Linearizable checks reads against
// time; Snapshots checks them against etcd, across keys. Reads whose
// revision is older than etcd's history are skipped.
func Snapshots(h history.History, e Etcd) Report {
	r := Report{Checker: "Snapshots"}
	byRev := e.byRev()
	var lists []history.Operation
	for _, op := range h.Operations {
		if op.Outcome != history.Acknowledged {
			continue
		}
		switch {
		case op.Kind == history.Get && op.Found:
			if op.RV < e.FirstRev {
				r.Skipped++
				continue
			}
			r.Checked++
			c, ok := byRev[op.RV]
			if !ok || c.Delete || c.Key != op.Key || c.Value != op.Read {
				r.failf(Failure{Ops: []int{op.ID}, Key: op.Key, Rev: op.RV}, "%v: etcd's revision %d is not a put of that value to that key", op, op.RV)
			}
		case op.Kind == history.List:
			if e.FirstRev > 1 && op.RV < e.FirstRev {
				r.Skipped++
				continue
			}
			r.Checked++
			lists = append(lists, op)
		}
	}
	checkLists(&r, lists, e)
	return r
}

// checkLists replays etcd's history once, comparing each list with the
// state at its revision.
func checkLists(r *Report, lists []history.Operation, e Etcd) {
	sort.SliceStable(lists, func(i, j int) bool { return lists[i].RV < lists[j].RV })
	state := map[string]history.Item{}
	next := 0
	for _, op := range lists {
		for next < len(e.Changes) && e.Changes[next].Rev <= op.RV {
			c := e.Changes[next]
			if c.Delete {
				delete(state, c.Key)
			} else {
				state[c.Key] = history.Item{Key: c.Key, Value: c.Value, RV: c.Rev}
			}
			next++
		}
		got := map[string]history.Item{}
		for _, it := range op.Items {
			got[it.Key] = it
			if it.RV > op.RV {
				r.failf(Failure{Ops: []int{op.ID}, Key: it.Key, Rev: op.RV}, "%v: holds %q at revision %d, after the list's", op, it.Key, it.RV)
			}
		}
		for k, want := range state {
			if !strings.HasPrefix(k, op.Key) {
				continue
			}
			if it, ok := got[k]; !ok || it != want {
				r.failf(Failure{Ops: []int{op.ID}, Key: k, Rev: op.RV}, "%v: etcd at revision %d holds %q at revision %d value %q, the list %s",
					op, op.RV, k, want.RV, want.Value, describeItem(it, ok))
			}
		}
		for k, it := range got {
			if _, ok := state[k]; !ok || !strings.HasPrefix(k, op.Key) {
				r.failf(Failure{Ops: []int{op.ID}, Key: k, Rev: op.RV}, "%v: holds %q (rv %d), which etcd did not hold under %q at revision %d", op, k, it.RV, op.Key, op.RV)
			}
		}
	}
}

func describeItem(it history.Item, ok bool) string {
	if !ok {
		return "lacks it"
	}
	return fmt.Sprintf("has revision %d value %q", it.RV, it.Value)
}
