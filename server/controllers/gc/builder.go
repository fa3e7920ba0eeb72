package gc

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// The graph builder: the informers' events, in the order they come, change
// the graph (processChange, on one goroutine), and queue the nodes whose
// fate may have changed for the workers. The rules are upstream's graph
// builder's.

// changeType is what happened to an object.
type changeType int

const (
	added changeType = iota
	updated
	deleted
)

// A change is one informer event, or a virtual delete: a worker's live
// read found an object of the graph absent.
type change struct {
	typ      changeType
	gvk      schema.GroupVersionKind
	obj, old *metav1.PartialObjectMetadata
	virtual  bool
}

// identity is the ref of the object ch is about.
func (ch *change) identity() ref {
	return ref{APIVersion: ch.gvk.GroupVersion().String(), Kind: ch.gvk.Kind,
		Namespace: ch.obj.Namespace, Name: ch.obj.Name, UID: ch.obj.UID}
}

// handlers turn an informer's events for gvk into changes.
func (c *collector) handlers(gvk schema.GroupVersionKind) cache.ResourceEventHandler {
	meta := func(obj any) *metav1.PartialObjectMetadata {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		m, _ := obj.(*metav1.PartialObjectMetadata)
		return m
	}
	add := func(ch *change) {
		if ch.obj != nil {
			c.changes.Add(ch)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { add(&change{typ: added, gvk: gvk, obj: meta(obj)}) },
		UpdateFunc: func(old, obj any) {
			add(&change{typ: updated, gvk: gvk, obj: meta(obj), old: meta(old)})
		},
		DeleteFunc: func(obj any) { add(&change{typ: deleted, gvk: gvk, obj: meta(obj)}) },
	}
}

// enqueueVirtualDelete records that a live read found id absent.
func (c *collector) enqueueVirtualDelete(id ref) {
	gv, _ := schema.ParseGroupVersion(id.APIVersion)
	c.changes.Add(&change{typ: deleted, virtual: true, gvk: gv.WithKind(id.Kind),
		obj: &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: id.Namespace, Name: id.Name, UID: id.UID}}})
}

// processNextChange applies the next change; false once the queue shut
// down.
func (c *collector) processNextChange() bool {
	ch, quit := c.changes.Get()
	if quit {
		return false
	}
	defer c.changes.Done(ch)
	c.graph.mu.Lock()
	defer c.graph.mu.Unlock()
	c.processChangeLocked(ch)
	return true
}

// processChangeLocked applies ch to the graph. c.graph.mu must be held.
func (c *collector) processChangeLocked(ch *change) {
	g, obj, id := c.graph, ch.obj, ch.identity()
	existing, found := g.nodes[obj.UID]
	if found && !ch.virtual && existing.virtual {
		// First sight of an object known from references: its dependents
		// that named it otherwise must be checked again.
		if existing.id != id {
			_, mismatched := partition(existing, id)
			for _, d := range mismatched {
				if id.Namespace != "" && d.id.Namespace != id.Namespace {
					c.reportInvalidNamespace(d, id.UID)
				}
				c.attemptToDelete.Add(d)
			}
			existing.id = id
		}
		existing.virtual = false
	}
	switch {
	case ch.typ != deleted && !found:
		deleting := obj.DeletionTimestamp != nil
		n := &node{id: id, owners: obj.OwnerReferences, dependents: make(map[*node]struct{}),
			beingDeleted: deleting, deletingDependents: deleting && hasFinalizer(obj, metav1.FinalizerDeleteDependents)}
		g.nodes[obj.UID] = n
		c.addToOwnersLocked(n, n.owners)
		c.transitionsLocked(ch.old, obj, n)
	case ch.typ != deleted:
		addedRefs, removedRefs, changedRefs := diffOwners(existing.owners, obj.OwnerReferences)
		if len(addedRefs)+len(removedRefs)+len(changedRefs) > 0 {
			c.enqueueUnblockedLocked(removedRefs, changedRefs)
			existing.owners = obj.OwnerReferences
			c.addToOwnersLocked(existing, addedRefs)
			removeFromOwnersLocked(g, existing, removedRefs)
		}
		if obj.DeletionTimestamp != nil {
			existing.beingDeleted = true
		}
		c.transitionsLocked(ch.old, obj, existing)
	case found:
		c.deleteLocked(ch, existing, id)
	}
}

// deleteLocked applies the deletion (ch) of existing, the node of id's
// UID. c.graph.mu must be held.
func (c *collector) deleteLocked(ch *change, existing *node, id ref) {
	g := c.graph
	if ch.virtual {
		// A live read found id absent, but the node may stand for another
		// identity of the same UID that its other dependents name.
		if existing.virtual {
			matching, mismatched := partition(existing, id)
			if len(mismatched) > 0 {
				if len(matching) > 0 {
					c.absent.Add(id, nil)
					c.enqueueAll(matching)
				}
				if existing.id == id {
					if alt, ok := alternateIdentity(mismatched, id); ok {
						existing.id = alt
						c.attemptToDelete.AddRateLimited(existing)
					}
				}
				return
			}
		} else if existing.id != id {
			matching, _ := partition(existing, id)
			if len(matching) > 0 {
				c.absent.Add(id, nil)
				c.enqueueAll(matching)
			}
			return
		}
	}
	delete(g.nodes, id.UID)
	removeFromOwnersLocked(g, existing, existing.owners)
	if len(existing.dependents) > 0 {
		c.absent.Add(id, nil)
	}
	for d := range existing.dependents {
		c.attemptToDelete.Add(d)
	}
	// An owner waiting for its dependents may now be done.
	for _, o := range existing.owners {
		if on, ok := g.nodes[o.UID]; ok && on.deletingDependents {
			c.attemptToDelete.Add(on)
		}
	}
}

func (c *collector) enqueueAll(nodes []*node) {
	for _, n := range nodes {
		c.attemptToDelete.Add(n)
	}
}

// addToOwnersLocked makes n a dependent of the owners refs name, adding a
// virtual node for each owner the graph does not know (to be verified by a
// worker), and queues n when a reference may not name its owner (another
// namespace, other coordinates). c.graph.mu must be held.
func (c *collector) addToOwnersLocked(n *node, refs []metav1.OwnerReference) {
	g := c.graph
	suspect := false
	for _, o := range refs {
		on, ok := g.nodes[o.UID]
		if !ok {
			on = &node{id: ownerRef(o, n.id.Namespace), dependents: make(map[*node]struct{}), virtual: true}
			g.nodes[o.UID] = on
		}
		on.dependents[n] = struct{}{}
		if !ok {
			c.attemptToDelete.Add(on)
			continue
		}
		if suspect {
			continue
		}
		ownerNamespaced := on.id.Namespace != ""
		switch {
		case ownerNamespaced && on.id.Namespace != n.id.Namespace:
			if !on.virtual {
				c.reportInvalidNamespace(n, o.UID)
			}
			suspect = true
		case !on.id.matches(o):
			suspect = true
		case !ownerNamespaced && n.id.Namespace != "" && on.virtual:
			suspect = true
		}
	}
	if suspect {
		c.attemptToDelete.Add(n)
	}
}

// removeFromOwnersLocked removes n from the dependents of the owners refs
// name. g.mu must be held.
func removeFromOwnersLocked(g *graph, n *node, refs []metav1.OwnerReference) {
	for _, o := range refs {
		if on, ok := g.nodes[o.UID]; ok {
			delete(on.dependents, n)
		}
	}
}

// enqueueUnblockedLocked queues the owners that a dependent no longer
// blocks: references with blockOwnerDeletion removed, or changed to not
// block. c.graph.mu must be held.
func (c *collector) enqueueUnblockedLocked(removed []metav1.OwnerReference, changed [][2]metav1.OwnerReference) {
	enqueue := func(uid types.UID) {
		if on, ok := c.graph.nodes[uid]; ok {
			c.attemptToDelete.Add(on)
		}
	}
	for _, o := range removed {
		if blocks(o) {
			enqueue(o.UID)
		}
	}
	for _, pair := range changed {
		if blocks(pair[0]) && !blocks(pair[1]) {
			enqueue(pair[1].UID)
		}
	}
}

func blocks(o metav1.OwnerReference) bool {
	return o.BlockOwnerDeletion != nil && *o.BlockOwnerDeletion
}

// transitionsLocked queues the work a deletion that has just started asks
// for: orphaning, or deleting the dependents first. c.graph.mu must be held.
func (c *collector) transitionsLocked(old, obj *metav1.PartialObjectMetadata, n *node) {
	if startsDeletionWith(old, obj, metav1.FinalizerOrphanDependents) {
		c.attemptToOrphan.Add(n)
		return
	}
	if startsDeletionWith(old, obj, metav1.FinalizerDeleteDependents) {
		n.deletingDependents = true
		for d := range n.dependents {
			c.attemptToDelete.Add(d)
		}
		c.attemptToDelete.Add(n)
	}
}

// startsDeletionWith reports whether obj is being deleted with finalizer
// f and old (nil for a first sight) was not.
func startsDeletionWith(old, obj *metav1.PartialObjectMetadata, f string) bool {
	if obj.DeletionTimestamp == nil || !hasFinalizer(obj, f) {
		return false
	}
	return old == nil || old.DeletionTimestamp == nil || !hasFinalizer(old, f)
}

func hasFinalizer(obj metav1.Object, f string) bool { return slices.Contains(obj.GetFinalizers(), f) }

// diffOwners compares two ownerReference lists by UID: the references
// only in new, those only in old, and the pairs (old, new) that differ.
func diffOwners(old, new []metav1.OwnerReference) (added, removed []metav1.OwnerReference, changed [][2]metav1.OwnerReference) {
	byUID := make(map[types.UID]metav1.OwnerReference, len(old))
	for _, o := range old {
		byUID[o.UID] = o
	}
	for _, n := range new {
		o, ok := byUID[n.UID]
		switch {
		case !ok:
			added = append(added, n)
		case !sameRef(o, n):
			changed = append(changed, [2]metav1.OwnerReference{o, n})
		}
		delete(byUID, n.UID)
	}
	for _, o := range old {
		if _, ok := byUID[o.UID]; ok {
			removed = append(removed, o)
		}
	}
	return added, removed, changed
}

func sameRef(a, b metav1.OwnerReference) bool {
	eq := func(x, y *bool) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return a.APIVersion == b.APIVersion && a.Kind == b.Kind && a.Name == b.Name && a.UID == b.UID &&
		eq(a.Controller, b.Controller) && eq(a.BlockOwnerDeletion, b.BlockOwnerDeletion)
}

// partition splits n's dependents by whether they refer to id (same
// coordinates, and for a namespaced id the same namespace) or to n's UID
// under other coordinates; a dependent may be in both. c.graph.mu must
// be held.
func partition(n *node, id ref) (matching, mismatched []*node) {
	for d := range n.dependents {
		match, mismatch := false, false
		if id.Namespace != "" && id.Namespace != d.id.Namespace {
			mismatch = true
		} else {
			for _, o := range d.owners {
				if o.UID != id.UID {
					continue
				}
				if id.matches(o) {
					match = true
				} else {
					mismatch = true
				}
			}
		}
		if match {
			matching = append(matching, d)
		}
		if mismatch {
			mismatched = append(mismatched, d)
		}
	}
	return matching, mismatched
}

// alternateIdentity picks, among the identities deps give absent's UID
// other than absent (found absent), the next to verify: the least one
// ordered after absent, else the least, so that verifying them in turn
// ends. ok is false when there is none.
func alternateIdentity(deps []*node, absent ref) (_ ref, ok bool) {
	clusterScoped := absent.Namespace == ""
	var first, next *ref
	seen := map[ref]bool{absent: true}
	for _, d := range deps {
		for _, o := range d.owners {
			if o.UID != absent.UID {
				continue
			}
			if absent.matches(o) && (clusterScoped || absent.Namespace == d.id.Namespace) {
				continue // the identity just found absent
			}
			r := ownerRef(o, d.id.Namespace)
			if clusterScoped && r.APIVersion == absent.APIVersion && r.Kind == absent.Kind {
				r.Namespace = ""
			}
			if seen[r] {
				continue
			}
			seen[r] = true
			if first == nil || r.less(*first) {
				first = &r
			}
			if absent.less(r) && (next == nil || r.less(*next)) {
				next = &r
			}
		}
	}
	switch {
	case next != nil:
		return *next, true
	case first != nil:
		return *first, true
	}
	return ref{}, false
}
