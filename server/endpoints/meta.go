package endpoints

import (
	"context"
	"fmt"
	"maps"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The metadata rules of writes, as kube-apiserver applies them to custom
// resources (rest.BeforeCreate/BeforeUpdate and the CRD strategy): the
// server owns uid, creationTimestamp, generation and the deletion fields;
// status is written only through /status when the resource has one.

// metaPath is the field path of ObjectMeta in validation errors.
var metaPath = field.NewPath("metadata")

// ensureNamespace makes obj's namespace the request's: filled in when
// unset, cleared for cluster-scoped resources, 400 on a mismatch.
func (h *handler[O]) ensureNamespace(obj metav1.Object, namespace string) error {
	switch ns := obj.GetNamespace(); {
	case !h.def.Namespaced:
		obj.SetNamespace("")
	case ns == "":
		obj.SetNamespace(namespace)
	case ns != namespace:
		return errNamespaceMismatch
	}
	return nil
}

// errNamespaceMismatch is the 400 for a body whose namespace is not the
// request's.
var errNamespaceMismatch = apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")

// prepareCreate turns a decoded create body into the object to store. The
// status is cleared when it has its own subresource and a name generated
// from generateName if there is none; the kind's mutating hooks run; then
// the client's (and the hooks') system fields and resourceVersion are
// dropped and the server's set (uid, creationTimestamp in whole seconds,
// generation 1), and the kind's own Prepare runs, as on an update. It
// then validates the metadata and the schema (markers, CEL rules), as a
// CRD's create does, all violations in one 422
// Invalid: the schema validates f, the body's form (decodeForm; with the
// metadata just set), or, without one, obj's conversion, defaulted first.
// A body that did not decode into the Go type is then the 400 it kept.
// Managed fields are the caller's: tracked (trackCreate) or merged by an
// apply before.
func (h *handler[O]) prepareCreate(ctx context.Context, obj O, f *form, namespace string, now time.Time) error {
	if err := h.ensureNamespace(obj, namespace); err != nil {
		return err
	}
	if err := h.admitNamespace(ctx, obj, true); err != nil {
		return err
	}
	if h.def.HasStatus {
		h.def.CopyStatus(obj, h.def.New())
	}
	if obj.GetName() == "" && obj.GetGenerateName() != "" {
		obj.SetName(generateName(obj.GetGenerateName()))
	}
	var none O
	f, err := h.hookForm(ctx, obj, none, f, true, false)
	if err != nil {
		return err
	}
	dedupOwnerReferences(ctx, obj, true)
	// After the hooks, as kube-apiserver sets them after mutating
	// admission: what the server owns is the server's.
	obj.SetResourceVersion("")
	obj.SetSelfLink("")
	obj.SetDeletionTimestamp(nil)
	obj.SetDeletionGracePeriodSeconds(nil)
	obj.SetUID(types.UID(uuid.NewUUID()))
	obj.SetCreationTimestamp(metav1.NewTime(now.Truncate(time.Second)))
	if !h.def.Strategy.UntrackedGeneration {
		obj.SetGeneration(1)
	}
	h.prepareKind(obj, none)
	u, err := h.formContent(obj, f, true)
	if err != nil {
		return err
	}
	if f != nil && h.def.HasStatus {
		delete(u, "status") // as a CRD's create drops it
	}
	if err := h.admitWrite(ctx, obj, none, true); err != nil {
		return err
	}
	errs := apivalidation.ValidateObjectMetaAccessor(obj, h.def.Namespaced, h.nameRule(), metaPath)
	errs = append(errs, h.kindErrors(obj, none)...)
	if err := h.invalid(obj, h.validateCreate(ctx, obj, u, errs)); err != nil {
		return err
	}
	if err := f.decodeError(); err != nil {
		return err
	}
	return h.validateHooks(ctx, obj, none, true, false)
}

// nameRule is the rule of the kind's object names: its own
// (Definition.ValidateName) or the DNS-subdomain rule.
func (h *handler[O]) nameRule() apivalidation.ValidateNameFunc {
	if h.def.ValidateName != nil {
		return h.def.ValidateName
	}
	return apivalidation.NameIsDNSSubdomain
}

// decodeError is the error of a form whose content did not decode into
// the Go type, nil for none or no form.
func (f *form) decodeError() error {
	if f == nil {
		return nil
	}
	return f.typedErr
}

// invalid is the 422 Invalid for the violations errs of obj, naming the
// kind and the object with every violation as a cause, as kube-apiserver
// answers a write that fails validation; nil when errs is empty. The
// kind is the stored one, which kube-apiserver validates: an
// events.k8s.io/v1 Event is refused as an Event of the core group.
func (h *handler[O]) invalid(obj O, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(schema.GroupKind{Group: h.def.StorageGroupVersion().Group, Kind: h.gvk.Kind}, obj.GetName(), errs)
}

// prepareUpdate turns the object a client sent (or a patch produced) into
// the object to store over current, for a write to the main resource.
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
// obj's,
// which the caller tracked or an apply merged, unless only their
// timestamps moved in a write that changes nothing else
// (keepManagedFieldsTimes).
func (h *handler[O]) prepareUpdate(ctx context.Context, obj, current O, f *form, namespace string) error {
	if err := h.checkResourceVersion(obj, current); err != nil {
		return err
	}
	if err := h.admitNamespace(ctx, current, false); err != nil {
		return err
	}
	if err := h.ensureNamespace(obj, namespace); err != nil {
		return err
	}
	if h.def.HasStatus {
		h.def.CopyStatus(obj, current)
	}
	f, err := h.hookForm(ctx, obj, current, f, false, false)
	if err != nil {
		return err
	}
	dedupOwnerReferences(ctx, obj, true)
	// Defaults first, as decoding applies them in kube-apiserver, so a
	// write that omits a defaulted field does not count as a spec change.
	// A form's typed object has them already (decodeForm). What follows
	// changes only metadata the schema cannot constrain (its CEL rules see
	// metadata.name and generateName alone), so u, taken here, is what is
	// validated.
	var u map[string]any
	if f == nil {
		if u, err = h.defaulted(obj); err != nil {
			return err
		}
	}
	h.prepareKind(obj, current)
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
	keepManagedFieldsTimes(obj, current)
	var oldU map[string]any
	if h.check != nil {
		if oldU, err = h.toUnstructured(current); err != nil {
			return err
		}
		if f != nil {
			if u, err = h.formContent(obj, f, false); err != nil {
				return err
			}
			if h.def.HasStatus {
				setOrDelete(u, "status", oldU) // as a CRD's update keeps the stored status
			}
		}
	}
	if err := h.admitWrite(ctx, obj, current, false); err != nil {
		return err
	}
	errs := apivalidation.ValidateObjectMetaAccessor(obj, h.def.Namespaced, h.nameRule(), metaPath)
	errs = append(errs, apivalidation.ValidateObjectMetaAccessorUpdate(obj, current, metaPath)...)
	errs = append(errs, h.kindErrors(obj, current)...)
	if err := h.invalid(obj, h.validateUpdate(ctx, obj, u, oldU, errs)); err != nil {
		return err
	}
	if err := f.decodeError(); err != nil {
		return err
	}
	return h.validateHooks(ctx, obj, current, false, false)
}

// setOrDelete sets dst[key] to src[key], or deletes it when src has none.
func setOrDelete(dst map[string]any, key string, src map[string]any) {
	if v, ok := src[key]; ok {
		dst[key] = v
	} else {
		delete(dst, key)
	}
}

// prepareStatusUpdate returns the object to store for a write to /status:
// current with only its status and its managed fields (tracked by the
// caller, or merged by an apply) taken from obj, and the metadata a client
// writes where the kind's status strategy keeps it (takeMetadata); validated as a CRD's
// status strategy does (422 Invalid), with the kind's own status rules
// (Definition.ValidateStatus) first: the status by the schema, the whole
// object by the CEL rules, ratcheting against current, so a spec that a
// tightened schema refuses does not stop status writes. What is validated
// is current with the status of f, the request's form, or without a form
// the result's conversion, defaulted. A body that did not decode into the
// Go type is then the 400 it kept. The resourceVersion rules are those of
// the main resource. current is the caller's copy and becomes the result.
func (h *handler[O]) prepareStatusUpdate(ctx context.Context, obj, current O, f *form) (O, error) {
	var zero O
	if err := h.checkResourceVersion(obj, current); err != nil {
		return zero, err
	}
	if err := h.admitNamespace(ctx, current, false); err != nil {
		return zero, err
	}
	var old map[string]any
	if h.check != nil {
		var err error
		if old, err = h.toUnstructured(current); err != nil {
			return zero, err
		}
	}
	// Only a write whose managed fields differ from current's by their
	// timestamps alone needs current as it was (keepManagedFieldsTimes).
	var before O
	timesMoved := managedTimesOnlyMoved(obj.GetManagedFields(), current.GetManagedFields())
	if timesMoved {
		before = copyObject(current)
	}
	var stored O // current as stored, the hooks' and ValidateStatus's old object
	if h.def.Hooks != nil || h.def.ValidateStatus != nil {
		stored = copyObject(current)
	}
	var metaErrs field.ErrorList
	if h.def.Strategy.StatusUpdatesMetadata {
		metaErrs = h.takeMetadata(current, obj)
	}
	h.def.CopyStatus(current, obj)
	current.SetManagedFields(obj.GetManagedFields())
	f, err := h.hookForm(ctx, current, stored, f, false, true)
	if err != nil {
		return zero, err
	}
	var u map[string]any
	if f == nil {
		if u, err = h.defaulted(current); err != nil {
			return zero, err
		}
	}
	if timesMoved {
		keepManagedFieldsTimes(current, before)
	}
	if f != nil && h.check != nil {
		meta, err := metadataContent(current)
		if err != nil {
			return zero, apierrors.NewInternalError(fmt.Errorf("converting the metadata of %s to unstructured: %w", h.gvk.Kind, err))
		}
		// As a CRD's status strategy: the stored object, with the
		// request's status and the managed fields just tracked.
		u = maps.Clone(old)
		u["metadata"] = meta
		setOrDelete(u, "status", f.content)
	}
	if h.def.ValidateStatus != nil {
		metaErrs = append(metaErrs, h.def.ValidateStatus(current, stored)...)
	}
	if err := h.invalid(current, append(metaErrs, h.validateStatusUpdate(ctx, current, u, old)...)); err != nil {
		return zero, err
	}
	if err := f.decodeError(); err != nil {
		return zero, err
	}
	if err := h.validateHooks(ctx, current, stored, false, true); err != nil {
		return zero, err
	}
	return current, nil
}

// takeMetadata sets on current, the stored object a status write goes
// over, the metadata a client may write that obj, the request's object,
// carries (labels, annotations, finalizers, owner references), for a kind
// whose status strategy keeps them (resource.Strategy), and returns what
// the metadata rules say of the result.
func (h *handler[O]) takeMetadata(current, obj O) field.ErrorList {
	old := copyObject(current)
	current.SetLabels(obj.GetLabels())
	current.SetAnnotations(obj.GetAnnotations())
	current.SetFinalizers(obj.GetFinalizers())
	current.SetOwnerReferences(obj.GetOwnerReferences())
	errs := apivalidation.ValidateObjectMetaAccessor(current, h.def.Namespaced, h.nameRule(), metaPath)
	return append(errs, apivalidation.ValidateObjectMetaAccessorUpdate(current, old, metaPath)...)
}

// checkResourceVersion is the optimistic-concurrency check of an update:
// obj must carry current's resourceVersion (409 Conflict with another).
// Without one it is 422, unless the kind allows unconditional updates
// (resource.Strategy): obj then takes current's, and a concurrent write
// makes the update run again on the newer object.
func (h *handler[O]) checkResourceVersion(obj, current O) error {
	switch rv := obj.GetResourceVersion(); {
	case rv == "" && h.def.Strategy.UnconditionalUpdate:
		obj.SetResourceVersion(current.GetResourceVersion())
	case rv == "":
		// Upstream names the resource, not the kind, here.
		qualified := schema.GroupKind{Group: h.gr.Group, Kind: h.gr.Resource}
		return apierrors.NewInvalid(qualified, current.GetName(), field.ErrorList{
			field.Invalid(metaPath.Child("resourceVersion"), 0, "must be specified for an update"),
		})
	case rv != current.GetResourceVersion():
		return apierrors.NewConflict(h.gr, current.GetName(), errOptimisticLock)
	}
	return nil
}
