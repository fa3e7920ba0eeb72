package cache

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"unsafe"

	"k8s.io/apimachinery/pkg/fields"

	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
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

// TestItemObjectIsItsFramesBytes: the object an item keeps has its strings
// inside the item's frame, not copies (the memory that saves is in
// ingest.go's newItem), whether it came in by an event or by a relist; one
// whose JSON has an escape keeps copies, with the same content.
func TestItemObjectIsItsFramesBytes(t *testing.T) {
	h := newHarness(t)
	h.create("ns", "plain", "app", "web")
	escaped := h.create("ns", "escaped", "app", "a<b")
	rev, err := strconv.ParseInt(escaped.ResourceVersion, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	var c *Cache[*widget]
	held := func(name string) *item[*widget] {
		waitRevision(t, c, rev)
		c.mu.Lock()
		defer c.mu.Unlock()
		it, ok := c.tree.Get(&item[*widget]{key: storage.Key("ns", name)})
		if !ok {
			t.Fatalf("%s is not in the cache", name)
		}
		return it
	}
	check := func(how string) {
		it := held("plain")
		obj := it.object()
		for what, s := range map[string]string{"name": obj.Name, "namespace": obj.Namespace,
			"label": obj.Labels["app"], "color": obj.Spec.Color} {
			if !inside(s, it.frame) {
				t.Errorf("%s: the object's %s %q is a copy, not its frame's bytes", how, what, s)
			}
		}
		if it.labels["app"] != "web" || obj.Spec.Color != "red" {
			t.Errorf("%s: wrong object %+v", how, obj)
		}
		it = held("escaped")
		obj = it.object()
		if !it.kept || inside(obj.Name, it.frame) || obj.Labels["app"] != "a<b" || it.labels["app"] != "a<b" {
			t.Errorf("%s: the object with an escape (kept %v): %+v", how, it.kept, obj)
		}
	}
	c = h.cache
	check("after events")
	c = newReadyCache(t, storagetest.Definition(), h.src) // which lists them
	check("after a list")
}

// inside reports whether s's bytes lie within b.
func inside(s string, b []byte) bool {
	if s == "" || len(b) == 0 {
		return false
	}
	p, start := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return p >= start && p+uintptr(len(s)) <= start+uintptr(len(b))
}
