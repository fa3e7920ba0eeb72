package traffic

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/test/robustness/check"
)

// TestForCheckers: a scenario's records, turned into package check's
// input, pass the checkers when they agree with etcd, and fail the right
// checker when a write is lost or a watch drops an event.
func TestForCheckers(t *testing.T) {
	hist := []Change{
		{Name: "a", Type: watch.Added, Revision: 2, OpID: "c1"},
		{Name: "a", Type: watch.Modified, Revision: 3, OpID: "u1"},
		{Name: "a", Type: watch.Deleted, Revision: 4, PrevRevision: 3, PrevOpID: "u1"},
	}
	t0 := time.Now()
	at := func(op Op, i int) Op {
		op.Call, op.Return = t0.Add(time.Duration(2*i)*time.Millisecond), t0.Add(time.Duration(2*i+1)*time.Millisecond)
		return op
	}
	ops := []Op{
		at(Op{ID: "c1", Kind: Create, Name: "a", ResourceVersion: "2", Outcome: Acknowledged}, 0),
		at(Op{ID: "u1", Kind: Update, Name: "a", Precondition: "2", ResourceVersion: "3", Outcome: Acknowledged}, 1),
		at(Op{ID: "u9", Kind: Update, Name: "a", Precondition: "2", Outcome: Failed, Err: "409"}, 2),
		at(Op{ID: "d1", Kind: Delete, Name: "a", Precondition: "3", Outcome: Acknowledged}, 3),
	}
	events := []Event{
		{Type: watch.Added, Name: "a", ResourceVersion: 2, OpID: "c1"},
		{Type: watch.Modified, Name: "a", ResourceVersion: 3, OpID: "u1"},
		{Type: watch.Deleted, Name: "a", ResourceVersion: 4, OpID: "u1"},
	}
	run := func(ops []Op, events []Event) map[string]check.Report {
		w := &Watch{Segments: []Segment{{FromRV: 1, EndRV: 4, Events: events}}}
		h, e, _ := ForCheckers(ops, nil, hist, []*Watch{w}, nil)
		out := map[string]check.Report{}
		for _, r := range []check.Report{check.LostWrites(h, e), check.WatchStreams(h, e), check.Linearizable(h, 10*time.Second)} {
			out[r.Checker] = r
		}
		return out
	}
	for name, r := range run(ops, events) {
		if !r.OK() || r.Checked == 0 {
			t.Errorf("%s on an agreeing history: checked %d\n%s", name, r.Checked, r.String())
		}
	}

	lost := append(append([]Op(nil), ops...), at(Op{ID: "u2", Kind: Update, Name: "a", Precondition: "3", ResourceVersion: "5", Outcome: Acknowledged}, 4))
	if r := run(lost, events)["LostWrites"]; r.OK() {
		t.Errorf("LostWrites passed an acknowledged update etcd does not hold:\n%s", r.String())
	}
	dropped := []Event{events[0], events[2]}
	if r := run(ops, dropped)["WatchStreams"]; r.OK() {
		t.Errorf("WatchStreams passed a stream without the update at revision 3:\n%s", r.String())
	}
}
