package crdconf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadCasesRefusesBadTables: a table whose cases name the same object,
// or whose step has no verb or two, is refused before anything runs.
func TestLoadCasesRefusesBadTables(t *testing.T) {
	for name, table := range map[string]string{
		"same object":  "- {name: A b, steps: [{create: {}}]}\n- {name: a-B, steps: [{create: {}}]}\n",
		"two verbs":    "- {name: a, steps: [{create: {}, patch: {}}]}\n",
		"no verb":      "- {name: a, steps: [{dryRun: true}]}\n",
		"no steps":     "- {name: a}\n",
		"unknown verb": "- {name: a, steps: [{delete: {}}]}\n",
	} {
		path := filepath.Join(t.TempDir(), "cases.yaml")
		if err := os.WriteFile(path, []byte(table), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := loadCases(path); err == nil {
			t.Errorf("%s: loadCases accepted %q", name, table)
		}
	}
}

// TestCompare: a case is the same only when every step's code, reason,
// causes, message, spec and status agree; a documented difference counts
// apart, and a documented one that now agrees is counted as stale.
func TestCompare(t *testing.T) {
	ok := Outcome{Code: 201, Spec: map[string]any{"a": "b"}}
	bad := Outcome{Code: 422, Reason: "Invalid", Message: "m", Causes: []Cause{{Field: "spec.a", Type: "FieldValueInvalid", Message: "x"}}}
	cases := []Case{{Name: "same"}, {Name: "code"}, {Name: "cause"}, {Name: "spec"}, {Name: "documented", Differs: "why"}, {Name: "stale", Differs: "why"}}
	for i := range cases {
		cases[i].Steps = []Step{{Create: map[string]any{}}, {Create: map[string]any{}}}
	}
	otherCause := bad
	otherCause.Causes = []Cause{{Field: "spec.a", Type: "FieldValueRequired", Message: "x"}}
	golden := []CaseOutcome{
		{"same", []Outcome{ok, bad}}, {"code", []Outcome{ok, bad}}, {"cause", []Outcome{ok, bad}},
		{"spec", []Outcome{ok, ok}}, {"documented", []Outcome{ok, bad}}, {"stale", []Outcome{ok, bad}},
	}
	ours := []CaseOutcome{
		{"same", []Outcome{ok, bad}}, {"code", []Outcome{ok, ok}}, {"cause", []Outcome{ok, otherCause}},
		{"spec", []Outcome{ok, {Code: 201, Spec: map[string]any{"a": "c"}}}}, {"documented", []Outcome{bad, bad}}, {"stale", []Outcome{ok, bad}},
	}
	vs, err := compare(cases, golden, ours)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"same": true, "code": false, "cause": false, "spec": false, "documented": false, "stale": true}
	for _, v := range vs {
		if v.same != want[v.name] {
			t.Errorf("%s: same = %v (%s)", v.name, v.same, v.detail)
		}
	}
	if !strings.HasPrefix(vs[1].detail, "step 2: code CRD 422, apiloom 201") {
		t.Errorf("code: detail %q", vs[1].detail)
	}
	got := count(vs)
	if want := (totals{cases: 6, same: 2, documented: 1, different: 3, staleDocumented: 1}); got != want {
		t.Errorf("count = %+v, want %+v", got, want)
	}
	if _, err := compare(append(cases, Case{Name: "new", Steps: cases[0].Steps}), golden, append(ours, ours[0])); err == nil {
		t.Error("compare accepted a case the golden file lacks")
	}
}

// TestMergeKeepsNullsForAbsentFields: null removes a field the object has
// and is sent for one it lacks; nested objects merge.
func TestMergeKeepsNullsForAbsentFields(t *testing.T) {
	got, err := merge(map[string]any{"spec": map[string]any{"a": 1, "b": map[string]any{"c": 2}}},
		map[string]any{"spec": map[string]any{"a": nil, "n": nil, "b": map[string]any{"d": 3}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"spec":{"b":{"c":2,"d":3},"n":null}}`; string(got) != want {
		t.Errorf("merge = %s, want %s", got, want)
	}
}

// TestCanonicalOrder: causes and the message listing them come out in
// one order whatever order the server validated in.
func TestCanonicalOrder(t *testing.T) {
	a, b := Cause{Field: "spec.b", Type: "T", Message: "m2"}, Cause{Field: "spec.a", Type: "T", Message: "m1"}
	o1 := Outcome{Message: `W "x" is invalid: [spec.b: m2, spec.a: m1]`, Causes: []Cause{a, b}}
	o2 := Outcome{Message: `W "x" is invalid: [spec.a: m1, spec.b: m2]`, Causes: []Cause{b, a}}
	canonicalOrder(&o1)
	canonicalOrder(&o2)
	if d := diff(o1, o2); d != "" {
		t.Errorf("differ after canonicalOrder: %s", d)
	}
	// A message that does not list the causes as sent stays as it is.
	o3 := Outcome{Message: "something else", Causes: []Cause{a, b}}
	canonicalOrder(&o3)
	if o3.Message != "something else" || o3.Causes[0] != b {
		t.Errorf("canonicalOrder = %+v", o3)
	}
}
