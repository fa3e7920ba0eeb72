package check_test

import (
	"strings"
	"testing"

	"github.com/apiloom/apiloom/test/robustness/check"
	"github.com/apiloom/apiloom/test/robustness/history"
)

func TestSnapshots(t *testing.T) {
	etcd := check.Etcd{Changes: []check.Change{
		{Rev: 2, Key: "a/x", Created: true, Value: "w1"},
		{Rev: 3, Key: "b/x", Created: true, Value: "w2"},
		{Rev: 4, Key: "a/x", Value: "w3"},
		{Rev: 5, Key: "b/x", Delete: true, Value: "w2"},
	}}
	ax1 := history.Item{Key: "a/x", Value: "w1", RV: 2}
	ax3 := history.Item{Key: "a/x", Value: "w3", RV: 4}
	bx := history.Item{Key: "b/x", Value: "w2", RV: 3}
	listAt := func(prefix, rv string, at int64, items ...history.Item) history.Operation {
		return op(1, history.Request{Kind: history.List, Key: prefix, ReadRV: rv}, 1, 2, ack, history.Response{RV: at, Items: items})
	}
	getAt := func(key, rv string, value string, at int64) history.Operation {
		return op(1, history.Request{Kind: history.Get, Key: key, ReadRV: rv}, 1, 2, ack, read(value, at))
	}
	for _, tc := range []struct {
		name string
		op   history.Operation
		msg  string
	}{
		{"consistent list", listAt("", "", 5, ax3), ""},
		{"stale list of a state etcd had", listAt("", "0", 3, ax1, bx), ""},
		{"list of a prefix", listAt("a/", "0", 3, ax1), ""},
		{"stale get of a value etcd had", getAt("a/x", "0", "w1", 2), ""},
		{"list lacking a key", listAt("", "0", 3, ax1), `holds "b/x" at revision 3 value "w2", the list lacks it`},
		{"list with a deleted key", listAt("", "", 5, ax3, bx), `holds "b/x" (rv 3), which etcd did not hold`},
		{"list with a key outside its prefix", listAt("a/", "", 4, ax3, bx), `which etcd did not hold under "a/"`},
		{"list mixing revisions", listAt("", "0", 3, ax3, bx), "after the list's"},
		{"get of a value at another revision", getAt("a/x", "", "w3", 2), "is not a put of that value"},
		{"get of a deletion", getAt("b/x", "", "w2", 5), "is not a put of that value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := check.Snapshots(history.History{Operations: []history.Operation{tc.op}}, etcd)
			if tc.msg == "" {
				if !r.OK() || r.Checked != 1 {
					t.Fatalf("%s", &r)
				}
				return
			}
			if r.OK() || !names(&r, 1) || !strings.Contains(r.String(), tc.msg) {
				t.Fatalf("want a failure naming op 1 with %q, got %s", tc.msg, &r)
			}
		})
	}
}
