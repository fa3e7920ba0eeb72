package builtinconf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadCasesRefusesBadTables: a table with two cases of one name, a
// step with no verb or two, an unknown resource or patch type, or a
// watch inside a watch is refused before anything runs.
func TestLoadCasesRefusesBadTables(t *testing.T) {
	for name, table := range map[string]string{
		"same name":        "- {name: a, resource: configmaps, steps: [{get: x}]}\n- {name: a, resource: configmaps, steps: [{get: y}]}\n",
		"two verbs":        "- {name: a, resource: configmaps, steps: [{get: x, list: {}}]}\n",
		"no verb":          "- {name: a, resource: configmaps, steps: [{query: x=1}]}\n",
		"no steps":         "- {name: a, resource: configmaps}\n",
		"unknown resource": "- {name: a, resource: pods, steps: [{get: x}]}\n",
		"unknown patch":    "- {name: a, resource: configmaps, steps: [{patch: {name: x, type: yaml, body: {}}}]}\n",
		"nested watch":     "- {name: a, resource: configmaps, steps: [{watch: {steps: [{watch: {steps: [{get: x}]}}]}}]}\n",
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

// TestNormalizerKeepsRelations: uids and resourceVersions become
// placeholders numbered by first appearance, the same value the same
// placeholder in later answers and in messages; a list's own
// resourceVersion, times, the namespace and the run's id are replaced;
// placeholders in a step are expanded back.
func TestNormalizerKeepsRelations(t *testing.T) {
	n := newNormalizer("bc-1-abcd", "abcd")
	first, err := n.body([]byte(`{"kind":"ConfigMap","metadata":{"name":"x-abcd","namespace":"bc-1-abcd","uid":"u-1","resourceVersion":"100","creationTimestamp":"2026-01-01T00:00:00Z"}}`))
	if err != nil {
		t.Fatal(err)
	}
	meta := first.(map[string]any)["metadata"].(map[string]any)
	if meta["uid"] != "{uid1}" || meta["resourceVersion"] != "{rv1}" || meta["name"] != "x-{run}" ||
		meta["namespace"] != "{ns}" || meta["creationTimestamp"] != "{time}" {
		t.Errorf("first answer: %v", meta)
	}
	list, err := n.body([]byte(`{"kind":"ConfigMapList","metadata":{"resourceVersion":"150"},"items":[{"metadata":{"uid":"u-1","resourceVersion":"120"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	l := list.(map[string]any)
	item := l["items"].([]any)[0].(map[string]any)["metadata"].(map[string]any)
	if l["metadata"].(map[string]any)["resourceVersion"] != "{listrv}" || item["uid"] != "{uid1}" || item["resourceVersion"] != "{rv2}" {
		t.Errorf("list: %v", l)
	}
	status, err := n.body([]byte(`{"kind":"Status","message":"in precondition: 100, in record: 120, uid u-1, 7 items"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := status.(map[string]any)["message"]; got != "in precondition: {rv1}, in record: {rv2}, uid {uid1}, 7 items" {
		t.Errorf("message = %q", got)
	}
	s, err := n.expand(Step{Delete: &Delete{Name: "x-{run}", Options: map[string]any{"preconditions": map[string]any{"uid": "{uid1}", "resourceVersion": "{rv1}"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if p := s.Delete.Options["preconditions"].(map[string]any); s.Delete.Name != "x-abcd" || p["uid"] != "u-1" || p["resourceVersion"] != "100" {
		t.Errorf("expand = %+v", s.Delete)
	}
	if _, err := n.expand(Step{Get: "{gen1}"}); err == nil {
		t.Error("expand accepted a placeholder no answer gave")
	}
}

// TestCompare: a case is the same only when every step's code and body
// agree field by field; a documented difference counts apart, and a
// documented one that now agrees is counted as stale.
func TestCompare(t *testing.T) {
	obj := func(v string) Outcome {
		return Outcome{Code: 200, Body: map[string]any{"kind": "ConfigMap", "data": map[string]any{"k": v}}}
	}
	cases := []Case{{Name: "same"}, {Name: "code"}, {Name: "field"}, {Name: "documented", Differs: "why"}, {Name: "stale", Differs: "why"}}
	for i := range cases {
		cases[i].Steps = []Step{{Get: "a"}}
	}
	golden := []CaseOutcome{{"same", []Outcome{obj("v")}}, {"code", []Outcome{obj("v")}}, {"field", []Outcome{obj("v")}},
		{"documented", []Outcome{obj("v")}}, {"stale", []Outcome{obj("v")}}}
	notFound := obj("v")
	notFound.Code = 404
	ours := []CaseOutcome{{"same", []Outcome{obj("v")}}, {"code", []Outcome{notFound}}, {"field", []Outcome{obj("w")}},
		{"documented", []Outcome{obj("w")}}, {"stale", []Outcome{obj("v")}}}
	vs, err := compare(cases, golden, ours)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"same": true, "code": false, "field": false, "documented": false, "stale": true}
	for _, v := range vs {
		if v.same != want[v.name] {
			t.Errorf("%s: same = %v (%s)", v.name, v.same, v.detail)
		}
	}
	if want := `step 1: body.data.k: kube-apiserver "v", apiloom "w"`; vs[2].detail != want {
		t.Errorf("field: detail %q, want %q", vs[2].detail, want)
	}
	if !strings.HasPrefix(vs[1].detail, "step 1: code: kube-apiserver 200, apiloom 404") {
		t.Errorf("code: detail %q", vs[1].detail)
	}
	if got, want := count(vs), (totals{cases: 5, same: 2, documented: 1, different: 2, staleDocumented: 1}); got != want {
		t.Errorf("count = %+v, want %+v", got, want)
	}
	if _, err := compare(append(cases, Case{Name: "new", Steps: cases[0].Steps}), golden, append(ours, ours[0])); err == nil {
		t.Error("compare accepted a case the golden file lacks")
	}
}
