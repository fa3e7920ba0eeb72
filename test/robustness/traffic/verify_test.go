package traffic

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// etcdHistory: a created (rev 2, op c1), updated (rev 3, op u1), deleted (rev 4).
var etcdHistory = []Change{
	{Name: "a", Type: watch.Added, Revision: 2, OpID: "c1"},
	{Name: "a", Type: watch.Modified, Revision: 3, OpID: "u1"},
	{Name: "a", Type: watch.Deleted, Revision: 4, PrevRevision: 3},
}

func TestCheckWrites(t *testing.T) {
	ack := func(id string, k Kind, rv, pre string) Op {
		return Op{ID: id, Kind: k, Name: "a", ResourceVersion: rv, Precondition: pre, Outcome: Acknowledged}
	}
	with := func(op Op, o Outcome) Op { op.Outcome = o; return op }
	for _, tc := range []struct {
		name                   string
		ops                    []Op
		lost, phantom, unknown int
		unknownApplied         int
	}{
		{name: "all acknowledged writes present",
			ops: []Op{ack("c1", Create, "2", ""), ack("u1", Update, "3", "2"), ack("d1", Delete, "", "3")}},
		{name: "acknowledged update missing", lost: 1,
			ops: []Op{ack("u2", Update, "5", "3")}},
		{name: "acknowledged update at another revision", lost: 1,
			ops: []Op{ack("u1", Update, "9", "2")}},
		{name: "acknowledged delete of a version never deleted", lost: 1,
			ops: []Op{ack("d2", Delete, "", "2")}},
		{name: "failed update that took effect", phantom: 1,
			ops: []Op{with(ack("u1", Update, "", "2"), Failed)}},
		{name: "failed delete beside the acknowledged one", // 404 of the loser
			ops: []Op{ack("d1", Delete, "", "3"), with(ack("d9", Delete, "", "3"), Failed)}},
		{name: "failed delete alone took effect", phantom: 1,
			ops: []Op{with(ack("d9", Delete, "", "3"), Failed)}},
		{name: "unknown outcomes counted, applied or not", unknown: 2, unknownApplied: 1,
			ops: []Op{with(ack("u1", Update, "", "2"), Unknown), with(ack("u7", Update, "", "3"), Unknown)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := CheckWrites(tc.ops, etcdHistory)
			if len(v.Lost) != tc.lost || len(v.Phantom) != tc.phantom || v.Unknown != tc.unknown || v.UnknownApplied != tc.unknownApplied {
				t.Fatalf("got lost %d phantom %d unknown %d applied %d, want %d %d %d %d",
					len(v.Lost), len(v.Phantom), v.Unknown, v.UnknownApplied, tc.lost, tc.phantom, tc.unknown, tc.unknownApplied)
			}
		})
	}
}

func TestCheckWatch(t *testing.T) {
	ev := func(typ watch.EventType, rv int64) Event { return Event{Type: typ, Name: "a", ResourceVersion: rv} }
	for _, tc := range []struct {
		name    string
		segs    []Segment
		problem string
	}{
		{name: "complete", segs: []Segment{{FromRV: 1, EndRV: 4, Events: []Event{ev(watch.Added, 2), ev(watch.Modified, 3), ev(watch.Deleted, 4)}}}},
		{name: "relisted segments each complete", segs: []Segment{
			{FromRV: 1, EndRV: 2, Events: []Event{ev(watch.Added, 2)}},
			{FromRV: 3, EndRV: 4, Events: []Event{ev(watch.Deleted, 4)}}}},
		{name: "gap", problem: "event #1 is DELETED a@4, etcd has MODIFIED a@3",
			segs: []Segment{{FromRV: 1, EndRV: 4, Events: []Event{ev(watch.Added, 2), ev(watch.Deleted, 4)}}}},
		{name: "duplicate", problem: "event #1",
			segs: []Segment{{FromRV: 1, EndRV: 3, Events: []Event{ev(watch.Added, 2), ev(watch.Added, 2), ev(watch.Modified, 3)}}}},
		{name: "tail missing before the bookmark", problem: "missing 1 events",
			segs: []Segment{{FromRV: 1, EndRV: 4, Events: []Event{ev(watch.Added, 2), ev(watch.Modified, 3)}}}},
		{name: "wrong type", problem: "event #0",
			segs: []Segment{{FromRV: 1, EndRV: 2, Events: []Event{ev(watch.Modified, 2)}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(CheckWatch(&Watch{Segments: tc.segs}, etcdHistory), "\n")
			if (tc.problem == "") != (got == "") || !strings.Contains(got, tc.problem) {
				t.Fatalf("problems %q, want one containing %q", got, tc.problem)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	gr := schema.GroupResource{Group: "example.apiloom.dev", Resource: "databases"}
	for _, tc := range []struct {
		err         error
		outcome     Outcome
		unavailable bool
	}{
		{nil, Acknowledged, false},
		{apierrors.NewConflict(gr, "a", errors.New("x")), Failed, false},
		{apierrors.NewNotFound(gr, "a"), Failed, false},
		{apierrors.NewTooManyRequests("busy", 1), Failed, true},
		{apierrors.NewInternalError(errors.New("etcd")), Unknown, true},
		{apierrors.NewTimeoutError("slow", 1), Unknown, true},
		{fmt.Errorf("dial: %w", syscall.ECONNREFUSED), Failed, true},
		{errors.New("unexpected EOF"), Unknown, true},
	} {
		if o, u := classify(tc.err); o != tc.outcome || u != tc.unavailable {
			t.Errorf("classify(%v) = %v %v, want %v %v", tc.err, o, u, tc.outcome, tc.unavailable)
		}
	}
}

func TestSecondsUnavailable(t *testing.T) {
	start := time.Unix(100, 0)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	ops := []Op{
		{Call: at(1000), Return: at(1100), Unavailable: true},  // second 1
		{Call: at(1200), Return: at(1900), Unavailable: true},  // second 1 again
		{Call: at(2500), Return: at(3000)},                     // available
		{Call: at(7900), Return: at(10100), Unavailable: true}, // seconds 7-10: a hung request
	}
	reads := []Interval{{Call: at(5000), Return: at(5100)}} // second 5
	if n := SecondsUnavailable(start, ops, reads); n != 6 {
		t.Fatalf("seconds unavailable %d, want 6", n)
	}
}

// TestMinimalChecksVerdicts: supersede_test.go's tables record the
// minimal checks' own verdicts.
func TestMinimalChecksVerdicts(t *testing.T) {
	for _, tc := range writeCases {
		v := CheckWrites(tc.ops, supersededHistory)
		if bad := len(v.Lost)+len(v.Phantom) > 0; bad != tc.bad {
			t.Errorf("%s: CheckWrites bad %v, table says %v", tc.name, bad, tc.bad)
		}
	}
	for _, tc := range watchCases {
		if bad := len(CheckWatch(&Watch{Segments: tc.segs}, supersededHistory)) > 0; bad != tc.bad {
			t.Errorf("%s: CheckWatch bad %v, table says %v", tc.name, bad, tc.bad)
		}
	}
}
