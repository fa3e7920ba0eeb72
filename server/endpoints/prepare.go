package endpoints

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	k8sadmission "k8s.io/apiserver/pkg/admission"
)

// The three writes that store an object, create, update and /status, turn
// the request's object into the one to store by the admission chain
// (admit.go): each builds the write's KindStages (stages.go) and the
// chain runs them in its order, between the server's plugins.

// prepareCreate turns a decoded create body into the object to store, f
// being the body's form (decodeForm). The chain clears the status when it
// has its own subresource, generates a name from generateName if there is
// none and runs the kind's mutating hooks; then the server's fields are
// set (uid, creationTimestamp in whole seconds, generation 1) over what
// the client or the hooks wrote, and the kind's own Prepare runs. The
// metadata and the schema (markers, CEL rules) are validated as a CRD's
// create does, all violations in one 422 Invalid: the schema validates f
// with the metadata just set, or, without one, obj's conversion,
// defaulted first. A body that did not decode into the Go type is then
// the 400 it kept. Managed fields are the caller's: tracked (trackCreate)
// or merged by an apply before.
func (h *handler[O]) prepareCreate(ctx context.Context, obj O, f *form, namespace string, now time.Time) error {
	if err := h.ensureNamespace(obj, namespace); err != nil {
		return err
	}
	w := &write[O]{h: h, kind: creating, obj: obj, sent: obj, f: f, now: now}
	return h.admit(ctx, k8sadmission.Create, obj, nil, w)
}

// prepareUpdate turns the object a client sent (or a patch produced) into
// the object to store over current, for a write to the main resource or,
// with the object /scale changed, to /scale.
//
// The request must name current's resourceVersion (checkResourceVersion).
// The result keeps current's uid when the client sent none, its
// creationTimestamp and deletion fields and, with a status subresource,
// its status. Generation, where the kind tracks it (resource.Strategy),
// moves on when anything but metadata (and status) changed; the schema's
// defaults are applied before that comparison. The metadata, including the
// immutable fields, and the schema are then validated as a CRD's update
// does, ratcheting against current, all violations in one 422 Invalid. The
// whole object is validated, its status (current's, with a status
// subresource) too: f, the request's form, with the metadata set here and
// current's status, or without a form obj's conversion. A body that did
// not decode into the Go type is then the 400 it kept. Managed fields are
// obj's, which the caller tracked or an apply merged, unless only their
// timestamps moved in a write that changes nothing else
// (keepManagedFieldsTimes).
func (h *handler[O]) prepareUpdate(ctx context.Context, obj, current O, f *form, namespace string) error {
	if err := h.checkResourceVersion(obj, current); err != nil {
		return err
	}
	if err := h.ensureNamespace(obj, namespace); err != nil {
		return err
	}
	w := &write[O]{h: h, kind: updating, obj: obj, sent: obj, old: current, f: f}
	return h.admit(ctx, k8sadmission.Update, obj, current, w)
}

// prepareStatusUpdate returns the object to store for a write to /status:
// current with only its status and its managed fields (tracked by the
// caller, or merged by an apply) taken from obj, and the metadata a client
// writes where the kind's status strategy keeps it (takeMetadata);
// validated as a CRD's status strategy does (422 Invalid), with the kind's
// own status rules (Definition.ValidateStatus) first: the status by the
// schema, the whole object by the CEL rules, ratcheting against current,
// so a spec that a tightened schema refuses does not stop status writes.
// What is validated is current with the status of f, the request's form,
// or without a form the result's conversion, defaulted. A body that did
// not decode into the Go type is then the 400 it kept. The resourceVersion
// rules are those of the main resource. current is the caller's copy and
// becomes the result.
func (h *handler[O]) prepareStatusUpdate(ctx context.Context, obj, current O, f *form) (O, error) {
	var zero O
	if err := h.checkResourceVersion(obj, current); err != nil {
		return zero, err
	}
	stored := copyObject(current)
	w := &write[O]{h: h, kind: statusUpdating, obj: current, sent: obj, old: stored, f: f}
	if err := h.admit(ctx, k8sadmission.Update, current, stored, w); err != nil {
		return zero, err
	}
	return current, nil
}

// prepareFinalize returns the object a PUT of .../finalize stores over
// current: current with its own finalizers, the metadata a client writes
// (takeMetadata) and the managed fields (tracked by the caller) taken from
// obj, the request's object, which must carry current's resourceVersion;
// only the status stays current's, as kube-apiserver's finalize strategy
// resets only the status. Validated by the metadata rules and the kind's
// finalize rules (Finalize.Validate, else its Validate), one 422. current
// is the caller's copy and becomes the result.
func (h *handler[O]) prepareFinalize(ctx context.Context, obj, current O) (O, error) {
	var zero O
	if err := h.checkResourceVersion(obj, current); err != nil {
		return zero, err
	}
	stored := copyObject(current)
	w := &write[O]{h: h, kind: finalizing, obj: current, sent: obj, old: stored}
	if err := h.admit(ctx, k8sadmission.Update, current, stored, w); err != nil {
		return zero, err
	}
	return current, nil
}

// setServerFields sets what the server owns of obj, which a create
// stores at now, after the mutating hooks, as kube-apiserver sets them
// after mutating admission: what the client or a hook wrote there is
// dropped.
func (h *handler[O]) setServerFields(obj O, now time.Time) {
	obj.SetResourceVersion("")
	obj.SetSelfLink("")
	obj.SetDeletionTimestamp(nil)
	obj.SetDeletionGracePeriodSeconds(nil)
	obj.SetUID(types.UID(uuid.NewUUID()))
	obj.SetCreationTimestamp(metav1.NewTime(now.Truncate(time.Second)))
	if !h.def.Strategy.UntrackedGeneration {
		obj.SetGeneration(1)
	}
}

// keepServerFields sets on obj, which an update stores over current, what
// the server owns: current's uid when obj has none, its creationTimestamp
// and deletion fields, and the generation, which moves on when anything
// but metadata (and status) changed, where the kind tracks it.
func (h *handler[O]) keepServerFields(obj, current O) {
	obj.SetGeneration(current.GetGeneration())
	if !h.def.Strategy.UntrackedGeneration && !h.def.SpecEqual(obj, current) {
		obj.SetGeneration(current.GetGeneration() + 1)
	}
	if obj.GetUID() == "" {
		obj.SetUID(current.GetUID())
	}
	obj.SetCreationTimestamp(current.GetCreationTimestamp())
	if current.GetDeletionTimestamp() != nil {
		obj.SetDeletionTimestamp(current.GetDeletionTimestamp())
	}
	if current.GetDeletionGracePeriodSeconds() != nil && obj.GetDeletionGracePeriodSeconds() == nil {
		obj.SetDeletionGracePeriodSeconds(current.GetDeletionGracePeriodSeconds())
	}
	obj.SetSelfLink("")
}
