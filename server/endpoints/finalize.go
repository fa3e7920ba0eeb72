package endpoints

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
// finalizer is set (propagation.go: foregroundDeletion for Foreground),
// as kube-apiserver's namespace storage does, unless the preconditions
// fail; after that the object is answered as it is. With dryRun nothing
// is stored.
func (h *handler[O]) markFinalizing(ctx context.Context, key string, pre *storage.Preconditions, current O, dryRun bool, prop propagation) (O, error) {
	var zero O
	if err := checkPreconditions(key, pre, current); err != nil {
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
		prop.apply(obj) // whether metadata.finalizers remain does not matter here
	}
	if dryRun {
		obj := copyObject(current) // may be shared with other readers
		mark(obj)
		return obj, nil
	}
	// As upstream, the mark is conditioned on the object read (its uid).
	// pre may be shared by a deletecollection's objects: a copy.
	uid := string(current.GetUID())
	cond := storage.Preconditions{UID: &uid}
	if pre != nil {
		cond.ResourceVersion = pre.ResourceVersion
	}
	return h.store.GuaranteedUpdate(ctx, key, &cond, func(cur O) (O, error) {
		mark(cur)
		return cur, nil
	})
}

// prepareFinalize returns the object a PUT of .../finalize stores over
// current: current with its own finalizers, the metadata a client writes
// (takeMetadata) and the managed fields (tracked by the caller) taken from
// obj, the request's object, which must carry current's resourceVersion;
// only the status stays current's, as kube-apiserver's finalize strategy
// resets only the status. Validated by the metadata rules and the kind's
// finalize rules (Finalize.Validate, else its Validate), one 422. current
// is the caller's copy and becomes the result.
func (h *handler[O]) prepareFinalize(obj, current O) (O, error) {
	var zero O
	if err := h.checkResourceVersion(obj, current); err != nil {
		return zero, err
	}
	old := copyObject(current)
	errs := h.takeMetadata(current, obj)
	h.def.Finalize.Copy(current, obj)
	current.SetManagedFields(obj.GetManagedFields())
	if v := h.def.Finalize.Validate; v != nil {
		errs = append(errs, v(current, old)...)
	} else {
		errs = append(errs, h.kindErrors(current, old)...)
	}
	if err := h.invalid(current, errs); err != nil {
		return zero, err
	}
	return current, nil
}
