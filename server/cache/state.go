package cache

import (
	"slices"

	"github.com/google/btree"

	"github.com/apiloom/apiloom/server/resource"
)

// tree is the cache's state: the current version of every object, ordered
// by key as etcd orders them, so that lists come out in etcd's order and a
// namespace is a key range. Clones are O(1) and copy on write, which gives
// lists an immutable snapshot without holding a lock while they read it.
type tree[O resource.Object] = btree.BTreeG[*item[O]]

// treeDegree suits tens of thousands of items: shallow trees, small nodes
// to copy on write.
const treeDegree = 32

func newTree[O resource.Object]() *tree[O] {
	return btree.NewG(treeDegree, func(a, b *item[O]) bool { return a.key < b.key })
}

// keyRange is the half-open key range [from, to); "" as to means no end.
type keyRange struct{ from, to string }

// namespaceRange is the key range of a namespace's objects: keys are
// "namespace/name" and '0' follows '/'.
func namespaceRange(ns string) keyRange {
	if ns == "" {
		return keyRange{}
	}
	return keyRange{from: ns + "/", to: ns + "0"}
}

func (r keyRange) contains(key string) bool {
	return key >= r.from && (r.to == "" || key < r.to)
}

// view is the state at one revision, immutable: a snapshot of the tree at
// a revision at or after rev, with the changes made after rev undone.
type view[O resource.Object] struct {
	tree *tree[O] // read-only clone
	rev  int64
	// inNS is how many items tree holds in namespace ns, or in all when ns
	// is "": the cache counts them as it changes the tree.
	ns   string
	inNS int64
	// undo maps each key changed after rev to its item at rev (nil if it
	// did not exist); undoKeys are its keys, sorted.
	undo     map[string]*item[O]
	undoKeys []string
}

// undoEvents makes v the state before events, which are the changes
// made after v.rev in revision order, all applied to v.tree.
func (v *view[O]) undoEvents(events []*event[O]) {
	if len(events) == 0 {
		return
	}
	v.undo = make(map[string]*item[O], len(events))
	for _, e := range events {
		if _, seen := v.undo[e.key]; !seen {
			// The first change after rev tells the state at rev.
			v.undo[e.key] = e.prev
			v.undoKeys = append(v.undoKeys, e.key)
		}
	}
	slices.Sort(v.undoKeys)
}

// size is the number of objects at v.rev in namespace ns ("": in all),
// which must be the view's: its count in the tree, corrected for each
// undone key of the namespace, which costs a lookup per change since rev,
// not a walk of the tree. It reports false for another namespace.
func (v *view[O]) size(ns string) (int64, bool) {
	if ns != v.ns {
		return 0, false
	}
	n := v.inNS
	r := namespaceRange(ns)
	for _, k := range v.undoKeys {
		if !r.contains(k) {
			continue
		}
		if _, now := v.tree.Get(&item[O]{key: k}); now {
			n--
		}
		if v.undo[k] != nil {
			n++
		}
	}
	return n, true
}

// ascend calls fn with each item at v.rev whose key is in r, in key order,
// until fn returns false. It merges the tree's items with the undone keys:
// an undone key takes its state at rev (skipped if it did not exist then),
// whether or not it exists now.
func (v *view[O]) ascend(r keyRange, fn func(*item[O]) bool) {
	keys := v.undoKeys
	j, _ := slices.BinarySearch(keys, r.from)
	// undone emits the undone keys in r below limit ("": all), which the
	// tree does not have (keys it has are consumed as the tree reaches
	// them), and reports whether fn wants more.
	undone := func(limit string) bool {
		for ; j < len(keys) && r.contains(keys[j]) && (limit == "" || keys[j] < limit); j++ {
			if old := v.undo[keys[j]]; old != nil && !fn(old) {
				j++
				return false
			}
		}
		return true
	}
	more := true
	visit := func(cur *item[O]) bool {
		if len(keys) > 0 {
			if more = undone(cur.key); !more {
				return false
			}
			if j < len(keys) && keys[j] == cur.key {
				j++
				if old := v.undo[cur.key]; old != nil {
					more = fn(old)
				}
				return more
			}
		}
		more = fn(cur)
		return more
	}
	lo := &item[O]{key: r.from}
	if r.to == "" {
		v.tree.AscendGreaterOrEqual(lo, visit)
	} else {
		v.tree.AscendRange(lo, &item[O]{key: r.to}, visit)
	}
	if more {
		undone("")
	}
}
