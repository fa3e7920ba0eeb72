package cache

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"k8s.io/apimachinery/pkg/fields"
)

// TestFieldSetMatchesLikeTheMap checks that every selector matches an
// item's compact fields exactly as it matches the definition's map,
// present, absent and empty fields included.
func TestFieldSetMatchesLikeTheMap(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	keys := []string{"metadata.name", "metadata.namespace", "spec.engine", "spec.region"}
	values := []string{"", "a", "b"}
	for range 200 {
		set := fields.Set{}
		for _, k := range keys {
			if rnd.IntN(4) > 0 {
				set[k] = values[rnd.IntN(len(values))]
			}
		}
		compact := compactFields(set)
		for _, k := range append(keys, "spec.other") {
			for _, v := range values {
				for _, op := range []string{"=", "!="} {
					sel := fields.ParseSelectorOrDie(k + op + v)
					if got, want := sel.Matches(compact), sel.Matches(set); got != want {
						t.Fatalf("%s on %v: %v, the map %v", sel, set, got, want)
					}
				}
			}
			if compact.Has(k) != set.Has(k) || compact.Get(k) != set.Get(k) {
				t.Fatalf("%s in %v: %v %q", k, set, compact.Has(k), compact.Get(k))
			}
		}
	}
	both := fields.ParseSelectorOrDie(fmt.Sprintf("metadata.name=a,spec.region!=%s", "b"))
	if !both.Matches(compactFields(fields.Set{"metadata.name": "a", "spec.region": "c"})) {
		t.Fatal("a conjunction that holds did not match")
	}
}
