package check_test

import (
	"strings"
	"testing"

	"github.com/apiloom/apiloom/test/robustness/check"
	"github.com/apiloom/apiloom/test/robustness/history"
)

func TestLostWrites(t *testing.T) {
	etcd := check.Etcd{Changes: []check.Change{
		{Rev: 2, Key: "a", Created: true, Value: "w1"},
		{Rev: 3, Key: "b", Created: true, Value: "w2"},
		{Rev: 4, Key: "a", Value: "w3"},
		{Rev: 5, Key: "b", Delete: true, Value: "w2"},
		{Rev: 6, Key: "a", Value: "w9"},
	}}
	good := []history.Operation{
		op(1, create("a", "w1"), 1, 2, ack, acked(2)),
		op(2, create("b", "w2"), 1, 2, ack, acked(3)),
		op(3, update("a", "w3", 2), 3, 4, ack, acked(4)),
		op(4, del("b", 0), 3, 4, ack, acked(5)),
		op(5, update("a", "w4", 2), 5, 6, failed, refused(409, "Conflict")), // not committed
		op(6, update("a", "w5", 0), 5, 6, unknown, history.Response{}),      // not committed
		op(7, update("a", "w9", 4), 5, 6, unknown, history.Response{}),      // committed
	}
	for _, tc := range []struct {
		name string
		add  history.Operation
		msg  string // "" when the check passes
	}{
		{"correct", history.Operation{}, ""},
		{"acknowledged, no change at its revision", op(10, update("a", "w10", 0), 7, 8, ack, acked(7)), "no change at revision 7"},
		{"acknowledged, another key at its revision", op(10, update("b", "w10", 0), 7, 8, ack, acked(4)), `changed key "a"`},
		{"acknowledged, another value at its revision", op(10, update("a", "w10", 0), 7, 8, ack, acked(6)), `holds value "w9"`},
		{"acknowledged delete, a put at its revision", op(10, del("a", 0), 7, 8, ack, acked(6)), "is a put"},
		{"acknowledged create, an update at its revision", op(10, create("a", "w9"), 7, 8, ack, acked(6)), "updated an existing key"},
		{"failed definitely, committed", op(10, update("a", "w9", 0), 7, 8, failed, refused(422, "Invalid")), "failed definitely"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := history.History{Operations: append([]history.Operation(nil), good...)}
			if tc.add.ID != 0 {
				h.Operations = append(h.Operations, tc.add)
			}
			// The planted failed write shares its value with op 7:
			// only a value no other write claims is a failure.
			if tc.name == "failed definitely, committed" {
				h.Operations[6].Value = "w8"
			}
			r := check.LostWrites(h, etcd)
			if tc.msg == "" {
				if !r.OK() || r.Checked != 4 {
					t.Fatalf("%s", &r)
				}
				return
			}
			if r.OK() || !names(&r, 10) || !strings.Contains(r.String(), tc.msg) {
				t.Fatalf("want a failure naming op 10 with %q, got %s", tc.msg, &r)
			}
		})
	}
}

// TestLostWritesCompacted: a write older than etcd's history passes when
// the final state holds it or a later write that did not fail superseded
// it.
func TestLostWritesCompacted(t *testing.T) {
	final := map[string]history.Item{"a": {Key: "a", Value: "w1", RV: 2}, "b": {Key: "b", Value: "w5", RV: 10}}
	etcd := check.Etcd{FirstRev: 10, Final: final, Changes: []check.Change{{Rev: 10, Key: "b", Value: "w5"}}}
	ops := []history.Operation{
		op(1, create("a", "w1"), 1, 2, ack, acked(2)),
		op(2, create("b", "w2"), 1, 2, ack, acked(3)),
		op(3, create("c", "w3"), 1, 2, ack, acked(4)), // lost: no trace
		op(4, update("b", "w5", 0), 1, 12, unknown, history.Response{}),
	}
	r := check.LostWrites(history.History{Operations: ops}, etcd)
	if len(r.Failures) != 1 || !names(&r, 3) {
		t.Fatalf("want one failure naming op 3, got %s", &r)
	}
	// The supersedor failed definitely: op 2's value is gone for no
	// reason the history explains.
	ops[3].Outcome, ops[3].Response = failed, refused(409, "Conflict")
	r = check.LostWrites(history.History{Operations: ops}, etcd)
	if !names(&r, 2) || !names(&r, 3) {
		t.Fatalf("want failures naming ops 2 and 3, got %s", &r)
	}
}
