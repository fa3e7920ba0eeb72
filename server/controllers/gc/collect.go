package gc

import (
	"context"
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The attemptToDelete workers: a node is garbage when its owners are all
// gone (or going, with foregroundDeletion, and it blocks them); an owner
// being deleted in the foreground is finished when no blocking dependent
// is left. The rules are upstream's attemptToDeleteItem.

// errVirtualDeleteQueued ends an attempt whose object turned out absent:
// the graph will drop it and queue its dependents.
var errVirtualDeleteQueued = errors.New("gc: object absent; virtual delete queued")

// processNextDelete works on the next node of attemptToDelete; false once
// the queue shut down.
func (c *collector) processNextDelete(ctx context.Context) bool {
	n, quit := c.attemptToDelete.Get()
	if quit {
		return false
	}
	defer c.attemptToDelete.Done(n)
	if c.attemptToDeleteNode(ctx, n) {
		c.attemptToDelete.AddRateLimited(n)
	} else {
		c.attemptToDelete.Forget(n)
	}
	return true
}

// attemptToDeleteNode works on n and reports whether to try it again.
func (c *collector) attemptToDeleteNode(ctx context.Context, n *node) (retry bool) {
	if c.graph.view(n).virtual {
		// A virtual node that left the graph, or was observed since it was
		// queued, has nothing left to verify.
		cur, ok := c.graph.lookup(c.graph.view(n).id.UID)
		if !ok || cur != n || !c.graph.view(cur).virtual {
			return false
		}
	}
	err := c.attemptToDeleteItem(ctx, n)
	switch {
	case errors.Is(err, errVirtualDeleteQueued), errors.Is(err, errNamespacedOwnerOfClusterScoped):
		return false
	case err != nil:
		if ctx.Err() == nil {
			c.log.Warn("gc: will retry", "item", c.graph.view(n).id.String(), "err", err)
		}
		return true
	}
	// A virtual node found present waits until an informer observes it.
	return c.graph.view(n).virtual
}

// attemptToDeleteItem decides n's fate from a live read of it and of its
// owners.
func (c *collector) attemptToDeleteItem(ctx context.Context, n *node) error {
	v := c.graph.view(n)
	if v.beingDeleted && !v.deletingDependents {
		return nil // its own deletion is under way
	}
	latest, err := c.get(ctx, v.id)
	switch {
	case apierrors.IsNotFound(err):
		c.enqueueVirtualDelete(v.id)
		return errVirtualDeleteQueued
	case err != nil:
		return err
	case latest.UID != v.id.UID:
		c.enqueueVirtualDelete(v.id)
		return errVirtualDeleteQueued
	}
	if v.deletingDependents {
		return c.processDeletingDependents(ctx, n, v.id)
	}
	if len(latest.OwnerReferences) == 0 {
		return nil
	}
	solid, dangling, waiting, err := c.classify(ctx, v.id, latest.OwnerReferences)
	if err != nil {
		return err
	}
	switch {
	case len(solid) > 0:
		// It stays; it only loses the references to owners gone or going.
		gone := append(uids(dangling), uids(waiting)...)
		if len(gone) == 0 {
			return nil
		}
		return c.removeOwnerRefs(ctx, v.id, gone...)
	case len(waiting) > 0 && v.dependents > 0:
		// An owner waits for it in the foreground, and it has dependents of
		// its own: delete it in the foreground too. If one of them waits
		// for it likewise (a cycle), stop blocking the owners first.
		for _, d := range c.graph.dependents(n) {
			if d.deletingDependents {
				if err := c.unblockOwnerRefs(ctx, v.id); err != nil {
					return err
				}
				break
			}
		}
		return c.deleteNode(ctx, v.id, latest, metav1.DeletePropagationForeground)
	default:
		// Every owner is gone or going: delete it, with the policy its own
		// finalizers ask for.
		policy := metav1.DeletePropagationBackground
		switch {
		case hasFinalizer(latest, metav1.FinalizerOrphanDependents):
			policy = metav1.DeletePropagationOrphan
		case hasFinalizer(latest, metav1.FinalizerDeleteDependents):
			policy = metav1.DeletePropagationForeground
		}
		return c.deleteNode(ctx, v.id, latest, policy)
	}
}

// deleteNode deletes id's object, latest as read, with policy.
func (c *collector) deleteNode(ctx context.Context, id ref, latest *metav1.PartialObjectMetadata, policy metav1.DeletionPropagation) error {
	c.log.Debug("gc: deleting", "item", id.String(), "propagationPolicy", policy)
	err := c.deleteObject(ctx, id, latest.ResourceVersion, latest.OwnerReferences, policy)
	if apierrors.IsNotFound(err) {
		c.enqueueVirtualDelete(id)
		return errVirtualDeleteQueued
	}
	return err
}

// processDeletingDependents finishes n, an owner being deleted in the
// foreground, once no dependent blocks it; until then it queues the
// blocking dependents.
func (c *collector) processDeletingDependents(ctx context.Context, n *node, id ref) error {
	blocking := 0
	for _, d := range c.graph.dependents(n) {
		if !d.blocks {
			continue
		}
		blocking++
		if !d.deletingDependents {
			c.attemptToDelete.Add(d.node)
		}
	}
	if blocking > 0 {
		return nil
	}
	return c.removeFinalizer(ctx, id, metav1.FinalizerDeleteDependents)
}

// classify sorts the references of item by what a live read finds of
// their owners: present (solid), gone (dangling), or present and deleting
// their dependents in the foreground (waiting).
func (c *collector) classify(ctx context.Context, item ref, refs []metav1.OwnerReference) (solid, dangling, waiting []metav1.OwnerReference, err error) {
	for _, o := range refs {
		gone, owner, err := c.dangling(ctx, o, item)
		switch {
		case err != nil:
			return nil, nil, nil, err
		case gone:
			dangling = append(dangling, o)
		case owner.DeletionTimestamp != nil && hasFinalizer(owner, metav1.FinalizerDeleteDependents):
			waiting = append(waiting, o)
		default:
			solid = append(solid, o)
		}
	}
	return solid, dangling, waiting, nil
}

// dangling reports whether o, a reference of item, names no object: none
// under its name (for a namespaced kind, in item's namespace) or one of
// another UID. Otherwise it returns the owner as read.
func (c *collector) dangling(ctx context.Context, o metav1.OwnerReference, item ref) (bool, *metav1.PartialObjectMetadata, error) {
	key := ownerRef(o, "")
	if c.isAbsent(key) {
		return true, nil, nil
	}
	key.Namespace = item.Namespace
	if c.isAbsent(key) {
		return true, nil, nil
	}
	info, err := c.kinds.lookup(o.APIVersion, o.Kind)
	if err != nil {
		return false, nil, err
	}
	if !info.Namespaced {
		key.Namespace = ""
	} else if item.Namespace == "" {
		return false, nil, errNamespacedOwnerOfClusterScoped
	}
	owner, err := c.get(ctx, key)
	switch {
	case apierrors.IsNotFound(err):
		c.absent.Add(key, nil)
		return true, nil, nil
	case err != nil:
		return false, nil, err
	case owner.UID != o.UID:
		c.absent.Add(key, nil)
		return true, nil, nil
	}
	return false, owner, nil
}

func (c *collector) isAbsent(r ref) bool {
	_, ok := c.absent.Get(r)
	return ok
}

func uids(refs []metav1.OwnerReference) []types.UID {
	out := make([]types.UID, 0, len(refs))
	for _, r := range refs {
		out = append(out, r.UID)
	}
	return out
}
