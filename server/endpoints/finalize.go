package endpoints

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/endpoints/deletion"
	"github.com/apiloom/apiloom/server/storage"
)

// The finalize lifecycle of a kind with finalizers of its own
// (resource.Definition.Finalize, a Namespace's spec.finalizers), as
// kube-apiserver's namespace storage has it: the first DELETE marks the
// object (markFinalizing), a PUT of .../{name}/finalize changes its own
// finalizers and metadata, never the status (prepareFinalize), and the update that leaves it without
// finalizers of either kind deletes it (guaranteedUpdate).

// ownFinalizersPending reports whether obj has finalizers of its kind's
// own left.
func (h *handler[O]) ownFinalizersPending(obj O) bool {
	return h.def.Finalize != nil && h.def.Finalize.Pending(obj)
}

// markFinalizing answers a DELETE of current, an object of a kind with a
// finalize lifecycle that is not yet marked or still has its own
// finalizers: the first time, deletionTimestamp is set, the kind marks it
// (a Namespace becomes Terminating) and prop's garbage-collection
// finalizer is set (deletion.Propagation: foregroundDeletion for Foreground),
// as kube-apiserver's namespace storage does, unless the preconditions
// fail; after that the object is answered as it is. With dryRun nothing
// is stored.
func (h *handler[O]) markFinalizing(ctx context.Context, key string, pre *storage.Preconditions, current O, dryRun bool, prop deletion.Propagation) (O, error) {
	var zero O
	if err := storage.CheckPreconditions(key, pre, current); err != nil {
		return zero, err
	}
	if current.GetDeletionTimestamp() != nil {
		return current, nil
	}
	mark := func(obj O) {
		if obj.GetDeletionTimestamp() == nil {
			now := metav1.NewTime(time.Now().Truncate(time.Second))
			obj.SetDeletionTimestamp(&now)
		}
		h.def.Finalize.MarkDeleting(obj)
		prop.Apply(obj) // whether metadata.finalizers remain does not matter here
	}
	// As upstream, the mark is conditioned on the object read (its uid).
	// pre may be shared by a deletecollection's objects: a copy.
	uid := string(current.GetUID())
	cond := storage.Preconditions{UID: &uid}
	if pre != nil {
		cond.ResourceVersion = pre.ResourceVersion
	}
	return h.storage(dryRun).GuaranteedUpdate(ctx, key, &cond, func(cur O) (O, error) {
		mark(cur)
		return cur, nil
	})
}
