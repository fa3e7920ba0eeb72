package check_test

import (
	"testing"
	"time"

	"github.com/apiloom/apiloom/test/robustness/check"
	"github.com/apiloom/apiloom/test/robustness/internal/sim"
)

const seeds = 40

// TestCheckersPassCorrectRuns: on histories of a correct store, with
// overlapping calls and lost answers, cut and resumed watches and a 410,
// every checker passes.
func TestCheckersPassCorrectRuns(t *testing.T) {
	for _, cfg := range []sim.Config{
		{Lost: 0.1},
		{Clients: 8, Ops: 300, Lost: 0.3, Streams: 10, Informers: 4},
		{Clients: 2, Keys: []string{"a/0"}, Lost: 0.5},
		{Lost: 0.2, Applies: 15},
	} {
		for seed := range int64(seeds) {
			cfg.Seed = seed
			res := sim.Run(cfg)
			for _, r := range check.All(res.History, res.Etcd, 10*time.Second) {
				if !r.OK() || r.Skipped != 0 || r.Checked == 0 {
					t.Errorf("%+v: %s", cfg, &r)
				}
			}
		}
	}
}

// planted runs seeds with bug planted, and calls caught with each run
// whose bug was planted; at least half the seeds must plant it.
func planted(t *testing.T, bug sim.Bug, caught func(t *testing.T, res sim.Result)) {
	t.Helper()
	n := 0
	for seed := range int64(seeds) {
		res := sim.Run(sim.Config{Seed: seed, Lost: 0.1, Bug: bug})
		if !res.Planted.Done {
			continue
		}
		n++
		caught(t, res)
	}
	if n < seeds/2 {
		t.Fatalf("the bug was planted in %d runs of %d", n, seeds)
	}
}

// TestLostWritesCatchesAckWithoutCommit: a write acknowledged but never
// committed is reported, by operation id.
func TestLostWritesCatchesAckWithoutCommit(t *testing.T) {
	planted(t, sim.AckWithoutCommit, func(t *testing.T, res sim.Result) {
		r := check.LostWrites(res.History, res.Etcd)
		if !r.FailedOps()[res.Planted.Op] {
			t.Errorf("planted %+v, report does not name op %d: %s", res.Planted, res.Planted.Op, &r)
		}
	})
}

// TestWatchStreamsCatchesDroppedEvent: a stream that drops one event is
// reported, with the stream and the revision it lacks.
func TestWatchStreamsCatchesDroppedEvent(t *testing.T) {
	planted(t, sim.DropWatchEvent, func(t *testing.T, res sim.Result) {
		r := check.WatchStreams(res.History, res.Etcd)
		for _, f := range r.Failures {
			if f.Stream == res.Planted.Stream && f.Rev == res.Planted.Rev && f.Key == res.Planted.Key {
				return
			}
		}
		t.Errorf("planted %+v, not reported: %s", res.Planted, &r)
	})
}

// TestLinearizableCatchesStaleRead: a consistent get that returns a value
// older than a write that completed before it began is reported, by
// operation id; the other checkers see nothing wrong with etcd.
func TestLinearizableCatchesStaleRead(t *testing.T) {
	planted(t, sim.StaleRead, func(t *testing.T, res sim.Result) {
		r := check.Linearizable(res.History, 10*time.Second)
		if !r.FailedOps()[res.Planted.Op] {
			t.Errorf("planted %+v, report does not name op %d: %s", res.Planted, res.Planted.Op, &r)
		}
		if lw := check.LostWrites(res.History, res.Etcd); !lw.OK() {
			t.Errorf("a stale read is not a lost write: %s", &lw)
		}
	})
}

// TestConvergedCatchesMissedDelete: an informer that missed the delete of
// a key holds it at the end, and the key and the delete's revision are
// reported.
func TestConvergedCatchesMissedDelete(t *testing.T) {
	planted(t, sim.InformerMissesDelete, func(t *testing.T, res sim.Result) {
		r := check.Converged(res.History, res.Etcd)
		for _, f := range r.Failures {
			if f.Key == res.Planted.Key && f.Rev == res.Planted.Rev {
				return
			}
		}
		t.Errorf("planted %+v, not reported: %s", res.Planted, &r)
	})
}

// TestSnapshotsCatchesTornList: a list that lacks one object etcd held at
// the list's revision is reported, by operation id and key.
func TestSnapshotsCatchesTornList(t *testing.T) {
	planted(t, sim.TornList, func(t *testing.T, res sim.Result) {
		r := check.Snapshots(res.History, res.Etcd)
		for _, f := range r.Failures {
			if len(f.Ops) == 1 && f.Ops[0] == res.Planted.Op && f.Key == res.Planted.Key {
				return
			}
		}
		t.Errorf("planted %+v, not reported: %s", res.Planted, &r)
	})
}

// TestReadYourWritesCatchesStaleReplica: a consistent list on one replica
// that answers the state before a write the other replica acknowledged
// before the list was called is reported, naming the list (and the
// latest write of a key it missed, the planted one or a later one);
// Snapshots sees nothing wrong (the answer is a state etcd had).
func TestReadYourWritesCatchesStaleReplica(t *testing.T) {
	planted(t, sim.StaleReplicaRead, func(t *testing.T, res sim.Result) {
		r := check.ReadYourWrites(res.History, res.Etcd)
		found := false
		for _, f := range r.Failures {
			found = found || (len(f.Ops) == 2 && f.Ops[1] == res.Planted.Op && f.Rev >= res.Planted.Rev)
		}
		if !found {
			t.Errorf("planted %+v, not reported: %s", res.Planted, &r)
		}
		if s := check.Snapshots(res.History, res.Etcd); !s.OK() {
			t.Errorf("a stale list of a state etcd had is a snapshot: %s", &s)
		}
	})
}

// TestReadYourWritesCatchesStaleRead: a consistent get that returns the
// value a write replaced before the get began is reported, by operation
// id.
func TestReadYourWritesCatchesStaleRead(t *testing.T) {
	planted(t, sim.StaleRead, func(t *testing.T, res sim.Result) {
		r := check.ReadYourWrites(res.History, res.Etcd)
		if !r.FailedOps()[res.Planted.Op] {
			t.Errorf("planted %+v, report does not name op %d: %s", res.Planted, res.Planted.Op, &r)
		}
	})
}
