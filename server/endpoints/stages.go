package endpoints

import (
	"context"
	"fmt"
	"maps"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apiloom/apiloom/server/admission"
	"github.com/apiloom/apiloom/server/resource"
)

// writeKind is which write a write is.
type writeKind int

const (
	creating       writeKind = iota
	updating                 // the main resource, or through /scale
	statusUpdating           // /status
	finalizing               // /finalize
)

// write is one create or update on its way through the admission chain,
// as its KindStages: what the resource's own definition does to it, in
// the order the chain calls them. A write is used once: an update that
// storage retries on a fresher object builds a new one.
type write[O resource.Object] struct {
	h    *handler[O]
	kind writeKind
	// obj is what is stored: the request's object for a create or an
	// update; for /status and /finalize the caller's copy of the stored
	// object, which becomes the result.
	obj O
	// sent is the request's object (obj itself for a create or update).
	sent O
	// old is the stored object: the caller's for an update, a copy no one
	// else holds for /status and /finalize; the zero value for a create.
	old O
	// f is the request's form (nil for none: an apply's, /scale's).
	f   *form
	now time.Time // a create's

	// What the stages found, for the ones after them.
	u, oldU    map[string]any
	metaErrs   field.ErrorList
	timesMoved bool
}

var _ admission.KindStages = (*write[resource.Object])(nil)

// MutateHooks implements admission.KindStages: the object as the
// resource defines it before hooks see it (a subresource's fields are the
// stored ones, a generated name set), then the kind's mutating hooks.
func (w *write[O]) MutateHooks(ctx context.Context) error {
	h := w.h
	var err error
	switch w.kind {
	case creating:
		if h.def.HasStatus {
			h.def.CopyStatus(w.obj, h.def.New())
		}
		if w.obj.GetName() == "" && w.obj.GetGenerateName() != "" {
			w.obj.SetName(generateName(w.obj.GetGenerateName()))
		}
		w.f, err = h.hookForm(ctx, w.obj, w.old, w.f, true, false)
	case updating:
		if h.def.HasStatus {
			h.def.CopyStatus(w.obj, w.old)
		}
		w.f, err = h.hookForm(ctx, w.obj, w.old, w.f, false, false)
	case statusUpdating:
		// Only a write whose managed fields differ from the stored ones by
		// their timestamps alone keeps the stored ones (Prepare).
		w.timesMoved = managedTimesOnlyMoved(w.sent.GetManagedFields(), w.obj.GetManagedFields())
		if h.def.Strategy.StatusUpdatesMetadata {
			w.metaErrs = h.takeMetadata(w.obj, w.sent)
		}
		h.def.CopyStatus(w.obj, w.sent)
		w.obj.SetManagedFields(w.sent.GetManagedFields())
		w.f, err = h.hookForm(ctx, w.obj, w.old, w.f, false, true)
	}
	return err
}

// Prepare implements admission.KindStages: the fields the server owns,
// the kind's own Prepare, and the content the schema validates.
func (w *write[O]) Prepare(context.Context) error {
	switch w.kind {
	case creating:
		return w.prepareCreate()
	case updating:
		return w.prepareUpdate()
	case statusUpdating:
		return w.prepareStatus()
	case finalizing:
		h := w.h
		w.metaErrs = h.takeMetadata(w.obj, w.sent)
		h.def.Finalize.Copy(w.obj, w.sent)
		w.obj.SetManagedFields(w.sent.GetManagedFields())
	}
	return nil
}

func (w *write[O]) prepareCreate() error {
	h := w.h
	h.setServerFields(w.obj, w.now)
	h.prepareKind(w.obj, w.old)
	u, err := h.formContent(w.obj, w.f, true)
	if err != nil {
		return err
	}
	if w.f != nil && h.def.HasStatus {
		delete(u, "status") // as a CRD's create drops it
	}
	w.u = u
	return nil
}

func (w *write[O]) prepareUpdate() error {
	h := w.h
	var err error
	// Defaults first, as decoding applies them in kube-apiserver, so a
	// write that omits a defaulted field does not count as a spec change.
	// A form's typed object has them already (decodeForm). What follows
	// changes only metadata the schema cannot constrain (its CEL rules see
	// metadata.name and generateName alone), so u, taken here, is what is
	// validated.
	if w.f == nil {
		if w.u, err = h.defaulted(w.obj); err != nil {
			return err
		}
	}
	h.prepareKind(w.obj, w.old)
	h.keepServerFields(w.obj, w.old)
	keepManagedFieldsTimes(w.obj, w.old)
	if h.check == nil {
		return nil
	}
	if w.oldU, err = h.toUnstructured(w.old); err != nil {
		return err
	}
	if w.f != nil {
		if w.u, err = h.formContent(w.obj, w.f, false); err != nil {
			return err
		}
		if h.def.HasStatus {
			setOrDelete(w.u, "status", w.oldU) // as a CRD's update keeps the stored status
		}
	}
	return nil
}

func (w *write[O]) prepareStatus() error {
	h := w.h
	var err error
	if h.check != nil {
		if w.oldU, err = h.toUnstructured(w.old); err != nil {
			return err
		}
	}
	if w.f == nil {
		if w.u, err = h.defaulted(w.obj); err != nil {
			return err
		}
	}
	if w.timesMoved {
		keepManagedFieldsTimes(w.obj, w.old)
	}
	if w.f != nil && h.check != nil {
		meta, err := metadataContent(w.obj)
		if err != nil {
			return apierrors.NewInternalError(fmt.Errorf("converting the metadata of %s to unstructured: %w", h.gvk.Kind, err))
		}
		// As a CRD's status strategy: the stored object, with the
		// request's status and the managed fields just tracked.
		w.u = maps.Clone(w.oldU)
		w.u["metadata"] = meta
		setOrDelete(w.u, "status", w.f.content)
	}
	return nil
}

// Validate implements admission.KindStages: the metadata rules, the
// kind's own rules and its schema with CEL, one 422 Invalid; then a body
// that did not decode into the Go type is the 400 it kept.
func (w *write[O]) Validate(ctx context.Context) error {
	h := w.h
	var errs field.ErrorList
	switch w.kind {
	case creating:
		errs = apivalidation.ValidateObjectMetaAccessor(w.obj, h.def.Namespaced, h.nameRule(), metaPath)
		errs = append(errs, h.kindErrors(w.obj, w.old)...)
		errs = h.validateCreate(ctx, w.obj, w.u, errs)
	case updating:
		errs = apivalidation.ValidateObjectMetaAccessor(w.obj, h.def.Namespaced, h.nameRule(), metaPath)
		errs = append(errs, apivalidation.ValidateObjectMetaAccessorUpdate(w.obj, w.old, metaPath)...)
		errs = append(errs, h.kindErrors(w.obj, w.old)...)
		errs = h.validateUpdate(ctx, w.obj, w.u, w.oldU, errs)
	case statusUpdating:
		errs = w.metaErrs
		if h.def.ValidateStatus != nil {
			errs = append(errs, h.def.ValidateStatus(w.obj, w.old)...)
		}
		errs = append(errs, h.validateStatusUpdate(ctx, w.obj, w.u, w.oldU)...)
	case finalizing:
		errs = w.metaErrs
		if v := h.def.Finalize.Validate; v != nil {
			errs = append(errs, v(w.obj, w.old)...)
		} else {
			errs = append(errs, h.kindErrors(w.obj, w.old)...)
		}
	}
	if err := h.invalid(w.obj, errs); err != nil {
		return err
	}
	return w.f.decodeError()
}

// ValidateHooks implements admission.KindStages: the kind's validating
// hooks (none run on /finalize).
func (w *write[O]) ValidateHooks(ctx context.Context) error {
	switch w.kind {
	case creating:
		return w.h.validateHooks(ctx, w.obj, w.old, true, false)
	case updating:
		return w.h.validateHooks(ctx, w.obj, w.old, false, false)
	case statusUpdating:
		return w.h.validateHooks(ctx, w.obj, w.old, false, true)
	}
	return nil
}
