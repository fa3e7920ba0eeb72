package patch

import (
	"encoding/json"
	"testing"
)

// TestSMPWork checks the predicted work of strategicpatch, in pairs of list
// elements, on shapes whose cost is known.
func TestSMPWork(t *testing.T) {
	meta := metaOf(t, rigDefinitions)
	var original map[string]any
	if err := json.Unmarshal([]byte(rigOriginal), &original); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		patch string
		want  int64
	}{
		{`{"metadata":{"labels":{"b":"2"}},"spec":{"size":3}}`, 0},
		{`{"spec":{"tags":["y"]}}`, 4},                                                               // 1 + 1 merged
		{`{"spec":{"zones":["a","b","c"]}}`, 0},                                                      // atomic: replaced
		{`{"spec":{"ports":[{"name":"a","port":1},{"name":"c"}]}}`, 16},                              // 2 + 2; a merges flat
		{`{"spec":{"volumes":[{"name":"v1","mounts":["m2"]}]}}`, 8},                                  // (1+1)² + mounts (1+1)²
		{`{"spec":{"volumes":[{"name":"v9","mounts":["a","b"]},{"name":"v9","mounts":["c"]}]}}`, 18}, // (1+2)² + the second v9 into the first: 3²
		{`{"spec":{"$setElementOrder/ports":[{"name":"b"},{"name":"a"}]}}`, 16},                      // order 2 + object 2
		{`{"metadata":{"$deleteFromPrimitiveList/finalizers":["example.com/f"]}}`, 4},
		{`{"spec":{"params":{"$patch":"replace"},"strategy":{"$patch":"delete"}}}`, 0},
		{`{"spec":{"tags":{"x":1},"ports":"y","bogus":["z"]}}`, 0}, // replaced, or refused by the library
		{`{"spec":{"ports":[{"name":{"x":1}},{"name":"a"}]}}`, 16}, // an unhashable key is the library's to refuse
	} {
		var patch map[string]any
		if err := json.Unmarshal([]byte(tc.patch), &patch); err != nil {
			t.Fatal(err)
		}
		if got := smpWork(original, patch, meta, 1<<40); got != tc.want {
			t.Errorf("%s: work %d, want %d", tc.patch, got, tc.want)
		}
	}
}
