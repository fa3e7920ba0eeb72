package builtinconf

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// A verdict is how one case's answers from apiloom compare with
// kube-apiserver's.
type verdict struct {
	name, resource string
	same           bool
	// documented is the case's Differs.
	documented string
	// detail says, for every step that differs, what differs.
	detail string
}

// compare judges every case of ours against the golden answers. A case
// missing from the golden file is an error: the golden file is stale.
func compare(cases []Case, golden, ours []CaseOutcome) ([]verdict, error) {
	byName := map[string]CaseOutcome{}
	for _, g := range golden {
		byName[g.Name] = g
	}
	var out []verdict
	for i, c := range cases {
		g, ok := byName[c.Name]
		if !ok || len(g.Steps) != len(c.Steps) {
			return nil, fmt.Errorf("case %q is not in the golden file as it is in the table: run make builtin-conformance", c.Name)
		}
		v := verdict{name: c.Name, resource: c.Resource, same: true, documented: c.Differs}
		var details []string
		for j := range c.Steps {
			if d := diffOutcome(g.Steps[j], ours[i].Steps[j]); len(d) > 0 {
				v.same = false
				details = append(details, fmt.Sprintf("step %d: %s", j+1, strings.Join(d, "; ")))
			}
		}
		v.detail = strings.Join(details, " | ")
		out = append(out, v)
	}
	return out, nil
}

// maxDiffs is how many differing fields a verdict names.
const maxDiffs = 4

// diffOutcome lists how ours differs from kube-apiserver's answer, field
// by field ("body.items[0].kind: kube-apiserver absent, apiloom \"ConfigMap\"").
func diffOutcome(kas, ours Outcome) []string {
	var d []string
	if kas.Code != ours.Code {
		d = append(d, fmt.Sprintf("code: kube-apiserver %d, apiloom %d", kas.Code, ours.Code))
	}
	d = diffValue(d, "body", normalizeNumbers(kas.Body), normalizeNumbers(ours.Body))
	if len(kas.Steps) != len(ours.Steps) {
		d = append(d, fmt.Sprintf("watch steps: kube-apiserver %d, apiloom %d", len(kas.Steps), len(ours.Steps)))
	}
	for i := range min(len(kas.Steps), len(ours.Steps)) {
		for _, s := range diffOutcome(kas.Steps[i], ours.Steps[i]) {
			d = append(d, fmt.Sprintf("watch step %d %s", i+1, s))
		}
	}
	ke, oe := eventsView(kas.Events), eventsView(ours.Events)
	d = diffValue(d, "events", normalizeNumbers(ke), normalizeNumbers(oe))
	if len(d) > maxDiffs {
		d = append(d[:maxDiffs], fmt.Sprintf("and %d more", len(d)-maxDiffs))
	}
	return d
}

func eventsView(es []Event) []any {
	out := make([]any, 0, len(es))
	for _, e := range es {
		out = append(out, map[string]any{"type": e.Type, "object": e.Object})
	}
	return out
}

// normalizeNumbers gives numbers one type (the golden file's YAML and a
// JSON answer may decode them differently).
func normalizeNumbers(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return v
	}
	return out
}

// diffValue appends to d every path under path where k and o differ.
func diffValue(d []string, path string, k, o any) []string {
	km, kok := k.(map[string]any)
	om, ook := o.(map[string]any)
	if kok && ook {
		keys := map[string]bool{}
		for key := range km {
			keys[key] = true
		}
		for key := range om {
			keys[key] = true
		}
		for _, key := range sortedKeys(toAnyMap(keys)) {
			kv, kin := km[key]
			ov, oin := om[key]
			switch {
			case !kin:
				d = append(d, fmt.Sprintf("%s.%s: kube-apiserver absent, apiloom %s", path, key, short(ov)))
			case !oin:
				d = append(d, fmt.Sprintf("%s.%s: kube-apiserver %s, apiloom absent", path, key, short(kv)))
			default:
				d = diffValue(d, path+"."+key, kv, ov)
			}
		}
		return d
	}
	ks, kok := k.([]any)
	ol, ook := o.([]any)
	if kok && ook && len(ks) == len(ol) {
		for i := range ks {
			d = diffValue(d, fmt.Sprintf("%s[%d]", path, i), ks[i], ol[i])
		}
		return d
	}
	if !reflect.DeepEqual(k, o) {
		d = append(d, fmt.Sprintf("%s: kube-apiserver %s, apiloom %s", path, short(k), short(o)))
	}
	return d
}

func toAnyMap(keys map[string]bool) map[string]any {
	m := make(map[string]any, len(keys))
	for k := range keys {
		m[k] = nil
	}
	return m
}

// short is v as JSON, cut to a readable length.
func short(v any) string {
	data, _ := json.Marshal(v)
	s := string(data)
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}

// totals counts the verdicts.
type totals struct{ cases, same, documented, different, staleDocumented int }

func count(vs []verdict) totals {
	t := totals{cases: len(vs)}
	for _, v := range vs {
		switch {
		case v.same && v.documented != "":
			t.same++
			t.staleDocumented++
		case v.same:
			t.same++
		case v.documented != "":
			t.documented++
		default:
			t.different++
		}
	}
	return t
}

func (t totals) String() string {
	return fmt.Sprintf("%d cases: %d same, %d different (%d undocumented, %d documented); %d marked as differing now match",
		t.cases, t.same, t.different+t.documented, t.different, t.documented, t.staleDocumented)
}

// table renders the verdicts for a person: one line a case, then totals.
func table(vs []verdict) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-60s %-22s %-10s %s\n", "CASE", "RESOURCE", "RESULT", "DETAIL")
	for _, v := range vs {
		res, detail := "same", ""
		switch {
		case v.same && v.documented != "":
			res, detail = "same", "marked as differing ("+v.documented+"): remove the mark"
		case !v.same && v.documented != "":
			res, detail = "documented", v.documented+" | "+v.detail
		case !v.same:
			res, detail = "DIFFERENT", v.detail
		}
		fmt.Fprintf(&b, "%-60s %-22s %-10s %s\n", v.name, v.resource, res, detail)
	}
	fmt.Fprintf(&b, "totals: %s\n", count(vs))
	return b.String()
}
