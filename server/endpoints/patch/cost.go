package patch

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// The work of strategicpatch grows with the square of the lists it merges
// (and worse: it deduplicates, matches and orders their elements by linear
// scans): a 3 MiB patch of 100,000 finalizers, or a small patch to an
// object holding a list of 10,000 elements, keeps a core busy for minutes.
// kube-apiserver has no bound. smpWork predicts that work before the
// library runs, from the patch and the lists of the object it reaches, so
// that a patch over the server's budget (the square of MergeStrategic's
// maxListElements, the server's Limits.StrategicMergePatchMaxListElements)
// is refused at a cost linear in its size.

// Directives of strategic merge patch.
const (
	smpDirective       = "$patch"
	smpDeleteFromList  = "$deleteFromPrimitiveList/"
	smpSetElementOrder = "$setElementOrder/"
	smpReplace         = "replace"
	smpMerge           = "merge"
	smpRetainKeys      = "retainKeys"
)

// smpWork is the work merging patch into original takes, in units of one
// pair of list elements: the sum, over every list the merge merges element
// by element, of the square of its length (the object's elements, the
// patch's, and those of a $setElementOrder list), following the library's
// recursion through maps and through list elements it matches by merge
// key. Whatever the library replaces whole, or refuses, costs nothing
// here: it is linear. The walk stops once the work exceeds limit.
func smpWork(original, patch map[string]any, meta strategicpatch.LookupPatchMeta, limit int64) int64 {
	if _, ok := patch[smpDirective]; ok {
		return 0 // the map is deleted or replaced, not merged
	}
	var work int64
	for k, pv := range patch {
		if work > limit {
			break
		}
		switch {
		case strings.HasPrefix(k, smpSetElementOrder):
			// The list is ordered by index lookups whatever its strategy.
			field := k[len(smpSetElementOrder):]
			ol, _ := original[field].([]any)
			pl, _ := patch[field].([]any)
			order, _ := pv.([]any)
			work += square(len(ol) + len(pl) + len(order))
		case strings.HasPrefix(k, smpDeleteFromList):
			ol, _ := original[k[len(smpDeleteFromList):]].([]any)
			dl, _ := pv.([]any)
			work += square(len(ol) + len(dl))
		case strings.HasPrefix(k, "$"):
			// $retainKeys: linear.
		default:
			work += smpFieldWork(original[k], pv, k, meta, limit-work)
		}
	}
	return work
}

// smpFieldWork is smpWork for the field key, whose value is ov in the
// object and pv in the patch, both maps or both lists or no work.
func smpFieldWork(ov, pv any, key string, meta strategicpatch.LookupPatchMeta, limit int64) int64 {
	switch p := pv.(type) {
	case map[string]any:
		o, ok := ov.(map[string]any)
		if !ok {
			return 0
		}
		sub, pm, err := meta.LookupPatchMetadataForStruct(key)
		if err != nil || smpStrategy(pm) == smpReplace {
			return 0
		}
		return smpWork(o, p, sub, limit)
	case []any:
		o, ok := ov.([]any)
		if !ok {
			return 0
		}
		sub, pm, err := meta.LookupPatchMetadataForSlice(key)
		if err != nil || smpStrategy(pm) != smpMerge {
			return 0
		}
		work := square(len(o) + len(p))
		if mk := pm.GetPatchMergeKey(); mk != "" && work <= limit {
			work += smpElementsWork(o, p, mk, sub, limit-work)
		}
		return work
	}
	return 0
}

// smpElementsWork is the work of merging the elements of the patch list p
// into those of the object's list o with the same merge key value. The
// library appends an element it finds no match for, and merges a later
// element with the same key into that one: the elements of one key merge
// one after the other into one map. The first merge into the object's
// element is counted exactly; every further one (a key repeated in the
// patch) at the square of all the list elements merged so far, which
// bounds it, as the lists of an element are never longer than that.
func smpElementsWork(o, p []any, mergeKey string, meta strategicpatch.LookupPatchMeta, limit int64) int64 {
	type group struct {
		elem   map[string]any // the object's element, or the patch's first
		merged bool           // elem has had a merge, or is the patch's
		elems  int            // list elements merged into the group so far
	}
	byKey := make(map[any]*group, len(o)+len(p))
	for _, e := range o {
		if m, ok := e.(map[string]any); ok {
			if v, ok := hashable(m[mergeKey]); ok && byKey[v] == nil { // the library merges into the first
				byKey[v] = &group{elem: m}
			}
		}
	}
	var work int64
	for _, e := range p {
		if work > limit {
			break
		}
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		if _, ok := m[smpDirective]; ok {
			continue // deletes or replaces: no merge
		}
		v, ok := hashable(m[mergeKey])
		if !ok {
			continue // the library cannot compare it and fails
		}
		g := byKey[v]
		switch {
		case g == nil:
			byKey[v] = &group{elem: m, merged: true, elems: listElements(m)}
		case !g.merged:
			work += smpWork(g.elem, m, meta, limit-work)
			g.merged, g.elems = true, listElements(g.elem)+listElements(m)
		default:
			g.elems += listElements(m)
			work += square(g.elems)
		}
	}
	return work
}

// listElements is how many list elements v holds, at any depth.
func listElements(v any) int {
	n := 0
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			n += listElements(e)
		}
	case []any:
		n += len(v)
		for _, e := range v {
			n += listElements(e)
		}
	}
	return n
}

// smpStrategy is the field's patch strategy, besides retainKeys.
func smpStrategy(pm strategicpatch.PatchMeta) string {
	for _, s := range pm.GetPatchStrategies() {
		if s != smpRetainKeys {
			return s
		}
	}
	return ""
}

// hashable is v if it can be a map key: what JSON decodes to, but maps and
// lists.
func hashable(v any) (any, bool) {
	switch v.(type) {
	case map[string]any, []any:
		return nil, false
	}
	return v, true
}

func square(n int) int64 { return int64(n) * int64(n) }
