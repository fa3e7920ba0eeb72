package traffic

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/test/robustness/check"
)

// The minimal checks' cases (CheckWrites, CheckWatch: removed once this
// test passed; TestMinimalChecksVerdicts held the tables to their verdicts
// until then), with the verdict the minimal checks gave:
// check.LostWrites and check.WatchStreams, through ForCheckers, must fail
// on every history the minimal checks failed on and pass the others, so
// that runScenario can rely on package check alone.

// supersededHistory: a created (rev 2, op c1), updated (rev 3, op u1),
// deleted (rev 4).
var supersededHistory = []Change{
	{Name: "a", Type: watch.Added, Revision: 2, OpID: "c1"},
	{Name: "a", Type: watch.Modified, Revision: 3, OpID: "u1"},
	{Name: "a", Type: watch.Deleted, Revision: 4, PrevRevision: 3, PrevOpID: "u1"},
}

func ack(id string, k Kind, rv, pre string) Op {
	return Op{ID: id, Kind: k, Name: "a", ResourceVersion: rv, Precondition: pre, Outcome: Acknowledged}
}

func with(op Op, o Outcome) Op { op.Outcome = o; return op }

// writeCases are CheckWrites' cases; bad says whether CheckWrites found
// a lost or phantom write.
var writeCases = []struct {
	name string
	ops  []Op
	bad  bool
}{
	{name: "all acknowledged writes present",
		ops: []Op{ack("c1", Create, "2", ""), ack("u1", Update, "3", "2"), ack("d1", Delete, "", "3")}},
	{name: "acknowledged update missing", bad: true,
		ops: []Op{ack("u2", Update, "5", "3")}},
	{name: "acknowledged update at another revision", bad: true,
		ops: []Op{ack("u1", Update, "9", "2")}},
	{name: "acknowledged delete of a version never deleted", bad: true,
		ops: []Op{ack("d2", Delete, "", "2")}},
	{name: "failed update that took effect", bad: true,
		ops: []Op{with(ack("u1", Update, "", "2"), Failed)}},
	{name: "failed delete beside the acknowledged one", // 404 of the loser
		ops: []Op{ack("d1", Delete, "", "3"), with(ack("d9", Delete, "", "3"), Failed)}},
	{name: "failed delete alone took effect", bad: true,
		ops: []Op{with(ack("d9", Delete, "", "3"), Failed)}},
	{name: "unknown outcomes, applied or not",
		ops: []Op{with(ack("u1", Update, "", "2"), Unknown), with(ack("u7", Update, "", "3"), Unknown)}},
}

func watchEv(typ watch.EventType, rv int64, id string) Event {
	return Event{Type: typ, Name: "a", ResourceVersion: rv, OpID: id}
}

// watchCases are CheckWatch's cases; bad says whether CheckWatch found a
// problem. Events carry the op ids etcd's history holds.
var watchCases = []struct {
	name string
	segs []Segment
	bad  bool
}{
	{name: "complete", segs: []Segment{{FromRV: 1, EndRV: 4, Events: []Event{
		watchEv(watch.Added, 2, "c1"), watchEv(watch.Modified, 3, "u1"), watchEv(watch.Deleted, 4, "u1")}}}},
	{name: "relisted segments each complete", segs: []Segment{
		{FromRV: 1, EndRV: 2, Events: []Event{watchEv(watch.Added, 2, "c1")}},
		{FromRV: 3, EndRV: 4, Events: []Event{watchEv(watch.Deleted, 4, "u1")}}}},
	{name: "gap", bad: true,
		segs: []Segment{{FromRV: 1, EndRV: 4, Events: []Event{watchEv(watch.Added, 2, "c1"), watchEv(watch.Deleted, 4, "u1")}}}},
	{name: "duplicate", bad: true,
		segs: []Segment{{FromRV: 1, EndRV: 3, Events: []Event{watchEv(watch.Added, 2, "c1"), watchEv(watch.Added, 2, "c1"), watchEv(watch.Modified, 3, "u1")}}}},
	{name: "tail missing before the bookmark", bad: true,
		segs: []Segment{{FromRV: 1, EndRV: 4, Events: []Event{watchEv(watch.Added, 2, "c1"), watchEv(watch.Modified, 3, "u1")}}}},
	{name: "wrong type", bad: true,
		segs: []Segment{{FromRV: 1, EndRV: 2, Events: []Event{watchEv(watch.Modified, 2, "c1")}}}},
}

// TestCheckersSupersedeMinimalChecks: on the minimal checks' cases,
// LostWrites fails exactly where CheckWrites did, WatchStreams exactly
// where CheckWatch did.
func TestCheckersSupersedeMinimalChecks(t *testing.T) {
	t0 := time.Now()
	for _, tc := range writeCases {
		t.Run("writes/"+tc.name, func(t *testing.T) {
			ops := append([]Op(nil), tc.ops...)
			for i := range ops {
				ops[i].Client = i
				ops[i].Call, ops[i].Return = t0.Add(time.Duration(2*i)*time.Millisecond), t0.Add(time.Duration(2*i+1)*time.Millisecond)
			}
			h, e, _ := ForCheckers(ops, nil, supersededHistory, nil, nil)
			if r := check.LostWrites(h, e); r.OK() == tc.bad {
				t.Errorf("CheckWrites found a problem: %v; LostWrites:\n%s", tc.bad, r.String())
			}
		})
	}
	for _, tc := range watchCases {
		t.Run("watch/"+tc.name, func(t *testing.T) {
			h, e, _ := ForCheckers(nil, nil, supersededHistory, []*Watch{{Segments: tc.segs}}, nil)
			if r := check.WatchStreams(h, e); r.OK() == tc.bad {
				t.Errorf("CheckWatch found a problem: %v; WatchStreams:\n%s", tc.bad, r.String())
			}
		})
	}
}
