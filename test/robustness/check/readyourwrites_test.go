package check_test

import (
	"strings"
	"testing"
	"time"

	"github.com/apiloom/apiloom/test/robustness/check"
	"github.com/apiloom/apiloom/test/robustness/history"
)

func TestReadYourWrites(t *testing.T) {
	etcd := check.Etcd{Changes: []check.Change{
		{Rev: 2, Key: "a/x", Created: true, Value: "w1"},
		{Rev: 3, Key: "a/y", Created: true, Value: "w2"},
		{Rev: 4, Key: "a/x", Value: "w3"},
		{Rev: 5, Key: "a/y", Delete: true, Value: "w2"},
	}}
	// The writes, on replica 0: a/x updated at 4 (returned at 10), a/y
	// created at 3 (returned at 5), deleted at 5 by someone else.
	writes := []history.Operation{
		op(1, create("a/y", "w2"), 1, 5, ack, acked(3)),
		op(2, update("a/x", "w3", 2), 6, 10, ack, acked(4)),
	}
	onReplica1 := func(o history.Operation) history.Operation { o.Replica = 1; return o }
	getAt := func(key string, call int, resp history.Response) history.Operation {
		return onReplica1(op(9, get(key), dur(call), dur(call+1), ack, resp))
	}
	listAt := func(call int, rv int64, items ...history.Item) history.Operation {
		return onReplica1(op(9, list("a/"), dur(call), dur(call+1), ack, history.Response{RV: rv, Items: items}))
	}
	ax3 := history.Item{Key: "a/x", Value: "w3", RV: 4}
	ax1 := history.Item{Key: "a/x", Value: "w1", RV: 2}
	ay := history.Item{Key: "a/y", Value: "w2", RV: 3}
	for _, tc := range []struct {
		name string
		read history.Operation
		msg  string // "" when the check passes
	}{
		{"get after the update", getAt("a/x", 11, read("w3", 4)), ""},
		{"get overlapping the update may be old", getAt("a/x", 9, read("w1", 2)), "owes nothing"},
		{"get of a key etcd deleted since", getAt("a/y", 11, history.Response{}), ""},
		{"list after both writes", listAt(11, 4, ax3, ay), ""},
		{"list after the delete", listAt(11, 5, ax3), ""},
		{"stale get on the other replica", getAt("a/x", 11, read("w1", 2)), "it read revision 2, older than the write's 4"},
		{"list below the write's revision", listAt(11, 3, ax1, ay), "the list is at revision 3, older than the write's 4"},
		{"list with an old item", listAt(11, 4, ax1, ay), `the list holds "a/x" at revision 2`},
		{"list lacking a key never deleted", listAt(11, 4, ay), `the list lacks "a/x"`},
		{"list lacking a key deleted only later", listAt(11, 4, ax3), `the list lacks "a/y", and etcd did not delete it in (3, 4]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := history.History{Operations: append(append([]history.Operation(nil), writes...), tc.read)}
			r := check.ReadYourWrites(h, etcd)
			if tc.msg == "owes nothing" {
				if !r.OK() || r.Checked != 0 {
					t.Fatalf("%s", &r)
				}
				return
			}
			if tc.msg == "" {
				if !r.OK() || r.Checked != 1 {
					t.Fatalf("%s", &r)
				}
				return
			}
			if r.OK() || !names(&r, 9) || !strings.Contains(r.String(), tc.msg) || !strings.Contains(r.String(), "(replica 1)") {
				t.Fatalf("want a failure naming op 9 on replica 1 with %q, got %s", tc.msg, &r)
			}
		})
	}
}

func dur(n int) time.Duration { return time.Duration(n) }
