package resource

import "k8s.io/apimachinery/pkg/util/validation/field"

// Finalize is a kind's own finalizers, beside metadata.finalizers, and the
// subresource that changes them, as kube-apiserver's namespace storage has
// them for a Namespace's spec.finalizers:
//
//   - the first DELETE of an object only records it (deletionTimestamp,
//     and MarkDeleting: a Namespace's status.phase Terminating) and answers
//     200 with the object; later DELETEs answer the same while Pending;
//   - a PUT of .../{name}/finalize changes only what Copy copies;
//   - an update that leaves neither Pending finalizers nor
//     metadata.finalizers on an object whose deletion was requested
//     deletes it.
type Finalize[O Object] struct {
	// Copy sets dst's own finalizers to src's.
	Copy func(dst, src O)
	// Pending reports whether obj has own finalizers left.
	Pending func(obj O) bool
	// MarkDeleting records on obj, as its deletion is first requested,
	// what the kind shows of it (a Namespace's phase Terminating).
	MarkDeleting func(obj O)
	// Validate, optional, returns what is wrong with obj, the object a
	// PUT of .../{name}/finalize would store over old, beyond the
	// metadata rules (kube-apiserver's finalize strategy ValidateUpdate);
	// nil: the kind's Definition.Validate. It must not change obj or old.
	Validate func(obj, old O) field.ErrorList
}
