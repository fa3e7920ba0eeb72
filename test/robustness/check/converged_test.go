package check_test

import (
	"strings"
	"testing"

	"github.com/apiloom/apiloom/test/robustness/check"
	"github.com/apiloom/apiloom/test/robustness/history"
)

func TestConverged(t *testing.T) {
	etcd := check.Etcd{Changes: []check.Change{
		{Rev: 2, Key: "a/x", Created: true, Value: "w1"},
		{Rev: 3, Key: "a/y", Created: true, Value: "w2"},
		{Rev: 4, Key: "b/x", Created: true, Value: "w3"},
		{Rev: 5, Key: "a/y", Delete: true, Value: "w2"},
		{Rev: 6, Key: "a/x", Value: "w4"},
	}}
	ops := []history.Operation{
		op(1, del("a/y", 0), 1, 2, ack, acked(5)),
		op(2, update("a/x", "w4", 0), 1, 2, unknown, history.Response{}),
	}
	ax := history.Item{Key: "a/x", Value: "w4", RV: 6}
	bx := history.Item{Key: "b/x", Value: "w3", RV: 4}
	for _, tc := range []struct {
		name   string
		prefix string
		items  []history.Item
		op     int
		msg    string
	}{
		{"all", "", []history.Item{ax, bx}, 0, ""},
		{"a prefix", "a/", []history.Item{ax}, 0, ""},
		{"missed delete", "a/", []history.Item{ax, {Key: "a/y", Value: "w2", RV: 3}}, 1, "etcd deleted at revision 5"},
		{"missed update", "a/", []history.Item{{Key: "a/x", Value: "w1", RV: 2}}, 2, `etcd at revision 6 value "w4"`},
		{"missed create", "", []history.Item{ax}, 0, `lacks "b/x"`},
		{"outside its prefix", "a/", []history.Item{ax, bx}, 0, `holds "b/x", outside its selector`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state := history.InformerState{Client: 7, Prefix: tc.prefix, Items: map[string]history.Item{}}
			for _, it := range tc.items {
				state.Items[it.Key] = it
			}
			r := check.Converged(history.History{Operations: ops, Informers: []history.InformerState{state}}, etcd)
			if tc.msg == "" {
				if !r.OK() || r.Checked != 1 {
					t.Fatalf("%s", &r)
				}
				return
			}
			if r.OK() || !strings.Contains(r.String(), tc.msg) || (tc.op != 0 && !names(&r, tc.op)) {
				t.Fatalf("want a failure with %q naming op %d, got %s", tc.msg, tc.op, &r)
			}
		})
	}
}
