package crdconf

import (
	"fmt"
	"reflect"
	"strings"
)

// A verdict is how one case's answers from apiloom compare with the CRD's.
type verdict struct {
	name, marker string
	same         bool
	// documented is the case's Differs: why the difference is deliberate.
	documented string
	// detail says, for the first step that differs, what differs.
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
			return nil, fmt.Errorf("case %q is not in the golden file as it is in the table: run make crd-conformance", c.Name)
		}
		v := verdict{name: c.Name, marker: c.Marker, same: true, documented: c.Differs}
		for j := range c.Steps {
			if d := diff(g.Steps[j], ours[i].Steps[j]); d != "" {
				v.same = false
				v.detail = fmt.Sprintf("step %d: %s", j+1, d)
				break
			}
		}
		out = append(out, v)
	}
	return out, nil
}

// diff says briefly how ours differs from the CRD's answer, or "".
func diff(crd, ours Outcome) string {
	switch {
	case crd.Code != ours.Code:
		return fmt.Sprintf("code CRD %d, apiloom %d%s", crd.Code, ours.Code, firstCause(crd, ours))
	case crd.Reason != ours.Reason:
		return fmt.Sprintf("reason CRD %q, apiloom %q", crd.Reason, ours.Reason)
	case !reflect.DeepEqual(crd.Causes, ours.Causes):
		return fmt.Sprintf("causes CRD %v, apiloom %v", crd.Causes, ours.Causes)
	case crd.Message != ours.Message:
		return fmt.Sprintf("message CRD %q, apiloom %q", crd.Message, ours.Message)
	case !reflect.DeepEqual(crd.Spec, ours.Spec):
		return fmt.Sprintf("spec CRD %v, apiloom %v", crd.Spec, ours.Spec)
	case !reflect.DeepEqual(crd.Status, ours.Status):
		return fmt.Sprintf("status CRD %v, apiloom %v", crd.Status, ours.Status)
	case crd.Generation != ours.Generation:
		return fmt.Sprintf("generation CRD %d, apiloom %d", crd.Generation, ours.Generation)
	case !reflect.DeepEqual(crd.Labels, ours.Labels):
		return fmt.Sprintf("labels CRD %v, apiloom %v", crd.Labels, ours.Labels)
	case !reflect.DeepEqual(crd.Annotations, ours.Annotations):
		return fmt.Sprintf("annotations CRD %v, apiloom %v", crd.Annotations, ours.Annotations)
	}
	return ""
}

// firstCause names what the refusing side said, to make a code mismatch readable.
func firstCause(crd, ours Outcome) string {
	for _, o := range []struct {
		who string
		o   Outcome
	}{{"CRD", crd}, {"apiloom", ours}} {
		if len(o.o.Causes) > 0 {
			c := o.o.Causes[0]
			return fmt.Sprintf(" (%s: %s %s: %s)", o.who, c.Type, c.Field, c.Message)
		}
		if o.o.Message != "" {
			return fmt.Sprintf(" (%s: %s)", o.who, o.o.Message)
		}
	}
	return ""
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
	return fmt.Sprintf("%d cases: %d same, %d different (%d undocumented, %d documented as deliberate); %d marked as differing now match",
		t.cases, t.same, t.different+t.documented, t.different, t.documented, t.staleDocumented)
}

// table renders the verdicts for a person: one line a case, then totals.
func table(vs []verdict) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-55s %-34s %-10s %s\n", "CASE", "MARKER", "RESULT", "DETAIL")
	for _, v := range vs {
		res, detail := "same", ""
		switch {
		case v.same && v.documented != "":
			res, detail = "same", "marked as differing ("+v.documented+"): remove the mark"
		case !v.same && v.documented != "":
			res, detail = "documented", v.documented+"; "+v.detail
		case !v.same:
			res, detail = "DIFFERENT", v.detail
		}
		fmt.Fprintf(&b, "%-55s %-34s %-10s %s\n", v.name, v.marker, res, detail)
	}
	fmt.Fprintf(&b, "totals: %s\n", count(vs))
	return b.String()
}
