package robustness

import (
	"fmt"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/apiloom/apiloom/test/robustness/history"
)

// The planted-bug tests of the checkers that look at reads and informers:
// Snapshots, ReadYourWrites and Converged (planted_test.go has the other
// three). Each failpoint is in the watch cache, which answers the
// traffic's consistent lists and the informers' watch-list watches.

// TestPlantedListDropItem: one consistent list leaves out one item.
// Snapshots must report that the list is not etcd's state at its
// revision, naming the list and the missing key.
func TestPlantedListDropItem(t *testing.T) {
	run := runPlanted(t, plantedOptions{failpoint: "listDropItem=30", informers: true})
	m := regexp.MustCompile(`^failpoint listDropItem fired: databases\.example\.apiloom\.dev consistent list at revision (\d+) left out (\S+)/(\S+) \(rv (\d+)\)`).FindStringSubmatch(run.fired)
	if m == nil {
		t.Fatalf("the failpoint fired elsewhere: %s", run.fired)
	}
	rev, key := atoi(t, m[1]), m[3]
	r := run.reports["Snapshots"]
	var planted map[int]bool
	for _, f := range r.Failures {
		if f.Key == key && f.Rev == rev && len(f.Ops) == 1 && run.isList(f.Ops[0], rev) {
			planted = opSet(f.Ops)
		}
	}
	if planted == nil {
		t.Fatalf("Snapshots did not report the list at revision %d that left out %q:\n%s", rev, key, r.String())
	}
	t.Logf("Snapshots caught the planted bug: list %s at revision %d lacks %q", opNames(run.ids, planted), rev, key)
	run.othersName(t, "Snapshots", key, planted)
}

// TestPlantedStaleConsistentList: one consistent list on replica 1 is
// answered from the state 50 changes back. Every write goes to replica 0;
// the readers list on both. ReadYourWrites must report that the list
// missed writes replica 0 acknowledged before it was called.
func TestPlantedStaleConsistentList(t *testing.T) {
	run := runPlanted(t, plantedOptions{failpoint: "staleConsistentList=30", writersOnReplica0: true, informers: true})
	m := regexp.MustCompile(`^failpoint staleConsistentList fired: databases\.example\.apiloom\.dev consistent list at revision (\d+) answered from revision (\d+)$`).FindStringSubmatch(run.fired)
	if m == nil {
		t.Fatalf("the failpoint fired elsewhere: %s", run.fired)
	}
	stale := atoi(t, m[2])
	r := run.reports["ReadYourWrites"]
	planted, missed := map[int]bool{}, 0
	for _, f := range r.Failures {
		if len(f.Ops) != 2 || !run.isList(f.Ops[1], stale) {
			continue
		}
		w := run.h.Operations[f.Ops[0]-1]
		if w.Replica != 0 || !w.Kind.IsWrite() {
			t.Errorf("ReadYourWrites names %v, not a write on replica 0: %s", w, f)
		}
		planted[f.Ops[1]] = true
		missed++
	}
	if len(planted) != 1 {
		t.Fatalf("ReadYourWrites did not report the list answered from revision %s (want one list named, got %s):\n%s", m[2], opNames(run.ids, planted), r.String())
	}
	t.Logf("ReadYourWrites caught the planted bug: list %s at revision %d missed %d writes acknowledged by replica 0", opNames(run.ids, planted), stale, missed)
	run.othersName(t, "ReadYourWrites", "", planted)
}

// TestPlantedInformerDropDelete: the watch cache keeps one DELETED event,
// and every later event of that key, from replica 1's informer. Converged
// must report that the informer's store still holds the key, naming it.
func TestPlantedInformerDropDelete(t *testing.T) {
	run := runPlanted(t, plantedOptions{failpoint: "informerDropDelete=10", informers: true})
	m := regexp.MustCompile(`^failpoint informerDropDelete fired: databases\.example\.apiloom\.dev DELETED (\S+) at revision (\d+) not sent to a watch-list watcher`).FindStringSubmatch(run.fired)
	if m == nil {
		t.Fatalf("the failpoint fired elsewhere: %s", run.fired)
	}
	key, rev := path.Base(m[1]), atoi(t, m[2])
	client := fmt.Sprintf("informer of client %d ", 200+plantedReplica)
	r := run.reports["Converged"]
	var planted map[int]bool
	for _, f := range r.Failures {
		if f.Key == key && strings.HasPrefix(f.Msg, client) {
			planted = opSet(f.Ops)
		}
	}
	if planted == nil {
		t.Fatalf("Converged did not report %q, whose delete at revision %d replica %d's informer never heard:\n%s", key, rev, plantedReplica, r.String())
	}
	t.Logf("Converged caught the planted bug on key %q (its last change written by %s)", key, opNames(run.ids, planted))
	run.othersName(t, "Converged", key, planted)
}

// isList reports whether operation id (1-based) is an acknowledged
// consistent list on the planted replica at revision rev.
func (run *plantedRun) isList(id int, rev int64) bool {
	if id < 1 || id > len(run.h.Operations) {
		return false
	}
	op := run.h.Operations[id-1]
	return op.Kind == history.List && op.Replica == plantedReplica && op.RV == rev && op.Outcome == history.Acknowledged
}
