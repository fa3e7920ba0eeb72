package robustness

import (
	"time"

	"github.com/apiloom/apiloom/test/robustness/check"
	"github.com/apiloom/apiloom/test/robustness/history"
	"github.com/apiloom/apiloom/test/robustness/traffic"
)

const (
	// informerCatchUp bounds the wait for the informers to reach etcd's
	// last change once traffic stopped.
	informerCatchUp = 30 * time.Second
	// linearizableTimeout bounds porcupine's search per key.
	linearizableTimeout = time.Minute
)

// faultWindow is when the scenario's fault lasted: from its injection to
// its repair. The p99 of the writes called in it is the scenario's "p99
// during the fault".
type faultWindow struct {
	from, to time.Time
}

// faultStart marks the fault's injection, once: kill marks it just before
// the kill, hold when the scenario injected the fault itself (a pause). A
// scenario that injects its fault otherwise calls it first.
func (s *scenario) faultStart() {
	if s.fault.from.IsZero() {
		s.fault.from = time.Now()
	}
}

// faultEnd marks the fault's repair, once: restartEtcd marks it when the
// cluster is healthy again, runScenario when the scenario's fault function
// returns (after its repair) if nothing marked it before.
func (s *scenario) faultEnd() {
	if s.fault.to.IsZero() && !s.fault.from.IsZero() {
		s.fault.to = time.Now()
	}
}

// check runs every checker of package check over the scenario's record
// and etcd's history, fails the test on any failure, and logs the
// scenario's FIGURES line.
func (s *scenario) check(start time.Time, elapsed time.Duration, hist []traffic.Change, watches []*traffic.Watch, informers []history.InformerState) {
	t := s.t
	ops, reads := s.rec.Ops(), s.rec.Reads()
	h, e, ids := traffic.ForCheckers(ops, reads, hist, watches, informers)
	reports := check.All(h, e, linearizableTimeout)
	for _, r := range reports {
		if !r.OK() {
			t.Errorf("%s (operation n is the clients' %s):\n%s", r.Checker, opNames(ids, r.FailedOps()), r.String())
		}
		t.Logf("checker %s: %d checked, %d skipped, %d failures %v", r.Checker, r.Checked, r.Skipped, len(r.Failures), r.Notes)
	}
	lost, phantom := lostAndPhantom(h, reports[0])
	shown := 0
	for _, op := range ops {
		if op.Outcome == traffic.Unknown && shown < 10 {
			shown++
			t.Logf("unknown outcome: %s %s %s via replica %d after %v: %s", op.ID, op.Kind, op.Name, op.Replica, op.Return.Sub(op.Call).Round(time.Millisecond), op.Err)
		}
	}
	acked, readsOK := 0, 0
	byKind := map[traffic.Kind]int{}
	for _, op := range ops {
		if op.Outcome == traffic.Acknowledged {
			acked++
			byKind[op.Kind]++
		}
	}
	for _, op := range reads {
		if op.Outcome == traffic.Acknowledged {
			readsOK++
		}
	}
	unknown, applied := traffic.UnknownWrites(ops, hist)
	relists, resumes, events := 0, 0, 0
	for _, w := range watches {
		relists += w.Relists
		resumes += w.Resumes
		for _, seg := range w.Segments {
			events += len(seg.Events)
		}
	}
	p99Fault, nFault := traffic.P99(ops, s.fault.from, s.fault.to)
	p99All, _ := traffic.P99(ops, start, time.Time{})
	t.Logf("FIGURES %s: duration %.0fs, seconds unavailable %d, writes %d, acknowledged %d (%d creates, %d updates, %d applies, %d deletes), lost %d, phantom %d, unknown %d (%d took effect), "+
		"consistent reads %d (%d answered), etcd changes %d, watch events %d, watch resumes %d, relists %d, informers %d, "+
		"fault %.1fs, p99 during the fault %v (%d acknowledged writes), p99 overall %v, RSS peak %s",
		t.Name(), elapsed.Seconds(), traffic.SecondsUnavailable(start, append(ops, reads...), s.rec.ReadFailures()), len(ops), acked,
		byKind[traffic.Create], byKind[traffic.Update], byKind[traffic.Apply], byKind[traffic.Delete], lost, phantom, unknown, applied, len(reads), readsOK, len(hist), events, resumes, relists, len(informers),
		s.fault.to.Sub(s.fault.from).Seconds(), p99Fault.Round(time.Millisecond), nFault, p99All.Round(time.Millisecond), s.res.peaks())
}

// lostAndPhantom splits LostWrites' failures: those naming an
// acknowledged write (lost), and the others (a write that failed
// definitely but took effect).
func lostAndPhantom(h history.History, lw check.Report) (lost, phantom int) {
	for _, f := range lw.Failures {
		if len(f.Ops) == 1 && h.Operations[f.Ops[0]-1].Outcome == history.Acknowledged {
			lost++
		} else {
			phantom++
		}
	}
	return lost, phantom
}
