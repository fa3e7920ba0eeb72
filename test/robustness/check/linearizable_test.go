package check_test

import (
	"testing"
	"time"

	"github.com/apiloom/apiloom/test/robustness/check"
	"github.com/apiloom/apiloom/test/robustness/history"
)

func TestLinearizable(t *testing.T) {
	notFound := history.Response{Code: 404, Reason: "NotFound"}
	base := []history.Operation{
		op(1, create("a", "w1"), 10, 20, ack, acked(2)),
		op(2, update("a", "w2", 2), 30, 40, ack, acked(5)),
	}
	for _, tc := range []struct {
		name  string
		ops   []history.Operation
		wrong int // the operation the report must name; 0 when linearizable
	}{
		{"sequential", []history.Operation{op(3, get("a"), 50, 60, ack, read("w2", 5))}, 0},
		{"read concurrent with the update sees either", []history.Operation{
			op(3, get("a"), 35, 45, ack, read("w1", 2)), op(4, get("a"), 35, 45, ack, read("w2", 5))}, 0},
		{"stale read", []history.Operation{op(3, get("a"), 50, 60, ack, read("w1", 2))}, 3},
		{"read of a value never written", []history.Operation{op(3, get("a"), 50, 60, ack, read("w9", 5))}, 3},
		{"read with a wrong revision", []history.Operation{op(3, get("a"), 50, 60, ack, read("w2", 4))}, 3},
		{"stale read at RV 0 is allowed", []history.Operation{
			op(3, history.Request{Kind: history.Get, Key: "a", ReadRV: "0"}, 50, 60, ack, read("w1", 2))}, 0},
		{"read going back in time", []history.Operation{
			op(3, get("a"), 25, 45, ack, read("w2", 5)), op(4, get("a"), 46, 47, ack, read("w1", 2))}, 4},
		{"create of an existing key acknowledged", []history.Operation{op(3, create("a", "w3"), 50, 60, ack, acked(7))}, 3},
		{"create of an existing key refused", []history.Operation{op(3, create("a", "w3"), 50, 60, failed, refused(409, "AlreadyExists"))}, 0},
		{"update with a stale precondition acknowledged", []history.Operation{op(3, update("a", "w3", 2), 50, 60, ack, acked(7))}, 3},
		{"update with a stale precondition refused", []history.Operation{op(3, update("a", "w3", 2), 50, 60, failed, refused(409, "Conflict"))}, 0},
		{"update with the current precondition refused", []history.Operation{op(3, update("a", "w3", 5), 50, 60, failed, refused(409, "Conflict"))}, 3},
		{"no-op update answers the current revision", []history.Operation{op(3, update("a", "w2", 5), 50, 60, ack, acked(5))}, 0},
		{"update of another value at the current revision", []history.Operation{op(3, update("a", "w3", 5), 50, 60, ack, acked(5))}, 3},
		{"revision going backwards", []history.Operation{op(3, update("a", "w3", 0), 50, 60, ack, acked(4))}, 3},
		{"refused update whose value is read", []history.Operation{
			op(3, update("a", "w3", 2), 50, 60, failed, refused(409, "Conflict")), op(4, get("a"), 70, 80, ack, read("w3", 7))}, 4},
		{"unknown update that happened", []history.Operation{
			op(3, update("a", "w3", 5), 50, 60, unknown, history.Response{}), op(4, get("a"), 70, 80, ack, read("w3", 7))}, 0},
		{"unknown update that did not happen", []history.Operation{
			op(3, update("a", "w3", 5), 50, 60, unknown, history.Response{}), op(4, get("a"), 70, 80, ack, read("w2", 5))}, 0},
		{"unknown update that happened late", []history.Operation{
			op(3, update("a", "w3", 5), 50, 60, unknown, history.Response{}), op(4, get("a"), 70, 80, ack, read("w2", 5)),
			op(5, get("a"), 90, 95, ack, read("w3", 9))}, 0},
		{"unknown write's revision below the last", []history.Operation{
			op(3, update("a", "w3", 5), 50, 60, unknown, history.Response{}), op(4, get("a"), 70, 80, ack, read("w3", 3))}, 4},
		{"unknown delete, then a get", []history.Operation{
			op(3, del("a", 0), 50, 60, unknown, history.Response{}), op(4, get("a"), 70, 80, ack, notFound)}, 0},
		{"delete then a read of the old value", []history.Operation{
			op(3, del("a", 5), 50, 60, ack, acked(6)), op(4, get("a"), 70, 80, ack, read("w2", 5))}, 4},
		{"list at the latest state", []history.Operation{
			op(3, list(""), 50, 60, ack, history.Response{RV: 5, Items: []history.Item{{Key: "a", Value: "w2", RV: 5}}})}, 0},
		{"list missing a key", []history.Operation{op(3, list(""), 50, 60, ack, history.Response{RV: 5})}, 3},
		{"list of another prefix", []history.Operation{op(3, list("b/"), 50, 60, ack, history.Response{RV: 5})}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ops := append(append([]history.Operation(nil), base...), tc.ops...)
			r := check.Linearizable(history.History{Operations: ops}, time.Minute)
			if tc.wrong == 0 {
				if !r.OK() || r.Checked != 1 {
					t.Fatalf("%s", &r)
				}
				return
			}
			if r.OK() || !names(&r, tc.wrong) {
				t.Fatalf("want a failure naming op %d, got %s", tc.wrong, &r)
			}
		})
	}
}

// TestLinearizablePendingIsUnknown: an operation still pending when the
// history was taken may or may not have happened.
func TestLinearizablePendingIsUnknown(t *testing.T) {
	ops := []history.Operation{
		op(1, create("a", "w1"), 10, 0, history.Pending, history.Response{}),
		op(2, get("a"), 20, 30, ack, read("w1", 2)),
		op(3, get("b"), 20, 30, ack, history.Response{}),
	}
	if r := check.Linearizable(history.History{Operations: ops}, time.Minute); !r.OK() || r.Checked != 2 {
		t.Fatalf("%s", &r)
	}
}
