package schemacheck

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// listSchema is a spec holding groups, lists of up to n strings of up to
// size bytes that must be distinct, checked by rules rules: each costs n*n
// string comparisons per group, which CEL prices by the strings' size, and
// their static estimates are within what a CRD accepts.
func listSchema(groups, n, size, rules int) string {
	var rs []string
	for i := range rules {
		rs = append(rs, fmt.Sprintf(`{"rule":"self.all(x, self.exists_one(y, x == y || %d == 0))","message":"must be distinct"}`, i+1))
	}
	return fmt.Sprintf(`{"type":"object","properties":{"spec":{"type":"object","properties":{
	  "groups":{"type":"array","maxItems":%d,"items":{
	    "type":"array","maxItems":%d,"items":{"type":"string","maxLength":%d},
	    "x-kubernetes-validations":[%s]}}}}}}`, groups, n, size, strings.Join(rs, ","))
}

// listObject is an object with groups groups of n distinct strings of size
// bytes.
func listObject(groups, n, size int) map[string]any {
	var g []any
	for range groups {
		var l []any
		for i := range n {
			l = append(l, fmt.Sprintf("%04d", i)+strings.Repeat("x", size-4))
		}
		g = append(g, l)
	}
	return map[string]any{"spec": map[string]any{"groups": g}}
}

// TestCELRuntimeLimits: a rule whose evaluation exceeds kube-apiserver's
// per-call limit, and rules that together exceed its per-object budget,
// are refused with the CRD's errors, and evaluation stops there.
func TestCELRuntimeLimits(t *testing.T) {
	ctx := context.Background()
	t.Run("per call", func(t *testing.T) {
		c := newCheck(t, listSchema(1, 100, 1000, 1))
		errs := c.Create(ctx, listObject(1, 100, 1000), nil, nil)
		if len(errs) != 1 || errs[0].Error() !=
			`spec.groups[0]: Invalid value: "array": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: must be distinct` {
			t.Fatalf("errors %v; want the per-call limit's", errs)
		}
		if errs := c.Create(ctx, listObject(1, 10, 1000), nil, nil); len(errs) != 0 {
			t.Fatalf("10 items: %v", errs)
		}
	})
	t.Run("per object", func(t *testing.T) {
		// Each rule's estimate is within the per-expression limit, the
		// ten within the per-schema one; the budget is hit at runtime.
		c := newCheck(t, listSchema(9, 50, 1000, 10))
		errs := c.Create(ctx, listObject(9, 50, 1000), nil, nil)
		if len(errs) == 0 || !strings.HasSuffix(errs[len(errs)-1].Error(),
			`: Invalid value: "array": validation failed due to running out of cost budget, no further validation rules will be run`) {
			t.Fatalf("errors %v; want the budget's", errs)
		}
		if errs := c.Create(ctx, listObject(3, 50, 1000), nil, nil); len(errs) != 0 {
			t.Fatalf("3 groups: %v", errs)
		}
	})
}
