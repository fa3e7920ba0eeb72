package strategy

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

// writeKind is which write a Write is.
type writeKind int

const (
	creating       writeKind = iota
	updating                 // the main resource, or through /scale
	statusUpdating           // /status
	finalizing               // /finalize
)

// Write is one create or update on its way through the admission chain,
// as its KindStages: what the resource's own definition does to it, in
// the order the chain calls them. A Write is used once: an update that
// storage retries on a fresher object builds a new one.
type Write[O resource.Object] struct {
	k    *Kind[O]
	kind writeKind
	req  Request
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
	f   *Form
	now time.Time // a create's

	// What the stages found, for the ones after them.
	u, oldU    map[string]any
	metaErrs   field.ErrorList
	timesMoved bool
}

var _ admission.KindStages = (*Write[resource.Object])(nil)

// Create is the create of obj, the request's object with f its form, at
// now.
func (k *Kind[O]) Create(req Request, obj O, f *Form, now time.Time) *Write[O] {
	return &Write[O]{k: k, req: req, kind: creating, obj: obj, sent: obj, f: f, now: now}
}

// Update is the update of current, the stored object, to obj, the
// request's object with f its form (through /scale, f is nil).
func (k *Kind[O]) Update(req Request, obj, current O, f *Form) *Write[O] {
	return &Write[O]{k: k, req: req, kind: updating, obj: obj, sent: obj, old: current, f: f}
}

// StatusUpdate is the write to /status of sent, the request's object
// with f its form, over current, the caller's copy of the stored object,
// which becomes the result; stored is another copy, kept as it is.
func (k *Kind[O]) StatusUpdate(req Request, sent, current, stored O, f *Form) *Write[O] {
	return &Write[O]{k: k, req: req, kind: statusUpdating, obj: current, sent: sent, old: stored, f: f}
}

// Finalize is the write to /finalize of sent over current, as
// StatusUpdate's.
func (k *Kind[O]) Finalize(req Request, sent, current, stored O) *Write[O] {
	return &Write[O]{k: k, req: req, kind: finalizing, obj: current, sent: sent, old: stored}
}

// MutateHooks implements admission.KindStages: the object as the
// resource defines it before hooks see it (a subresource's fields are the
// stored ones, a generated name set), then the kind's mutating hooks.
func (w *Write[O]) MutateHooks(ctx context.Context) error {
	k := w.k
	var err error
	switch w.kind {
	case creating:
		if k.def.HasStatus {
			k.def.CopyStatus(w.obj, k.def.New())
		}
		if w.obj.GetName() == "" && w.obj.GetGenerateName() != "" {
			w.obj.SetName(GenerateName(w.obj.GetGenerateName()))
		}
		w.f, err = k.hookForm(ctx, w.req, w.obj, w.old, w.f, true, false)
	case updating:
		if k.def.HasStatus {
			k.def.CopyStatus(w.obj, w.old)
		}
		w.f, err = k.hookForm(ctx, w.req, w.obj, w.old, w.f, false, false)
	case statusUpdating:
		// Only a write whose managed fields differ from the stored ones by
		// their timestamps alone keeps the stored ones (Prepare).
		w.timesMoved = managedTimesOnlyMoved(w.sent.GetManagedFields(), w.obj.GetManagedFields())
		if k.def.Strategy.StatusUpdatesMetadata {
			w.metaErrs = k.takeMetadata(w.obj, w.sent)
		}
		k.def.CopyStatus(w.obj, w.sent)
		w.obj.SetManagedFields(w.sent.GetManagedFields())
		w.f, err = k.hookForm(ctx, w.req, w.obj, w.old, w.f, false, true)
	}
	return err
}

// Prepare implements admission.KindStages: the fields the server owns,
// the kind's own Prepare, and the content the schema validates.
func (w *Write[O]) Prepare(context.Context) error {
	switch w.kind {
	case creating:
		return w.prepareCreate()
	case updating:
		return w.prepareUpdate()
	case statusUpdating:
		return w.prepareStatus()
	case finalizing:
		k := w.k
		w.metaErrs = k.takeMetadata(w.obj, w.sent)
		k.def.Finalize.Copy(w.obj, w.sent)
		w.obj.SetManagedFields(w.sent.GetManagedFields())
	}
	return nil
}

func (w *Write[O]) prepareCreate() error {
	k := w.k
	k.setServerFields(w.obj, w.now)
	k.prepareKind(w.obj, w.old)
	u, err := k.formContent(w.obj, w.f, true)
	if err != nil {
		return err
	}
	if w.f != nil && k.def.HasStatus {
		delete(u, "status") // as a CRD's create drops it
	}
	w.u = u
	return nil
}

func (w *Write[O]) prepareUpdate() error {
	k := w.k
	var err error
	// Defaults first, as decoding applies them in kube-apiserver, so a
	// write that omits a defaulted field does not count as a spec change.
	// A form's typed object has them already (DecodeForm). What follows
	// changes only metadata the schema cannot constrain (its CEL rules see
	// metadata.name and generateName alone), so u, taken here, is what is
	// validated.
	if w.f == nil {
		if w.u, err = k.defaulted(w.obj); err != nil {
			return err
		}
	}
	k.prepareKind(w.obj, w.old)
	k.keepServerFields(w.obj, w.old)
	keepManagedFieldsTimes(w.obj, w.old)
	if k.check == nil {
		return nil
	}
	if w.oldU, err = k.toUnstructured(w.old); err != nil {
		return err
	}
	if w.f != nil {
		if w.u, err = k.formContent(w.obj, w.f, false); err != nil {
			return err
		}
		if k.def.HasStatus {
			setOrDelete(w.u, "status", w.oldU) // as a CRD's update keeps the stored status
		}
	}
	return nil
}

func (w *Write[O]) prepareStatus() error {
	k := w.k
	var err error
	if k.check != nil {
		if w.oldU, err = k.toUnstructured(w.old); err != nil {
			return err
		}
	}
	if w.f == nil {
		if w.u, err = k.defaulted(w.obj); err != nil {
			return err
		}
	}
	if w.timesMoved {
		keepManagedFieldsTimes(w.obj, w.old)
	}
	if w.f != nil && k.check != nil {
		meta, err := metadataContent(w.obj)
		if err != nil {
			return apierrors.NewInternalError(fmt.Errorf("converting the metadata of %s to unstructured: %w", k.gvk.Kind, err))
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
func (w *Write[O]) Validate(ctx context.Context) error {
	k := w.k
	var errs field.ErrorList
	switch w.kind {
	case creating:
		errs = apivalidation.ValidateObjectMetaAccessor(w.obj, k.def.Namespaced, k.nameRule(), metaPath)
		errs = append(errs, k.kindErrors(w.obj, w.old)...)
		errs = k.validateCreate(ctx, w.obj, w.u, errs)
	case updating:
		errs = apivalidation.ValidateObjectMetaAccessor(w.obj, k.def.Namespaced, k.nameRule(), metaPath)
		errs = append(errs, apivalidation.ValidateObjectMetaAccessorUpdate(w.obj, w.old, metaPath)...)
		errs = append(errs, k.kindErrors(w.obj, w.old)...)
		errs = k.validateUpdate(ctx, w.obj, w.u, w.oldU, errs)
	case statusUpdating:
		errs = w.metaErrs
		if k.def.ValidateStatus != nil {
			errs = append(errs, k.def.ValidateStatus(w.obj, w.old)...)
		}
		errs = append(errs, k.validateStatusUpdate(ctx, w.obj, w.u, w.oldU)...)
	case finalizing:
		errs = w.metaErrs
		if v := k.def.Finalize.Validate; v != nil {
			errs = append(errs, v(w.obj, w.old)...)
		} else {
			errs = append(errs, k.kindErrors(w.obj, w.old)...)
		}
	}
	if err := k.Invalid(w.obj, errs); err != nil {
		return err
	}
	return w.f.DecodeError()
}

// ValidateHooks implements admission.KindStages: the kind's validating
// hooks (none run on /finalize).
func (w *Write[O]) ValidateHooks(ctx context.Context) error {
	switch w.kind {
	case creating:
		return w.k.validateHooks(ctx, w.req, w.obj, w.old, true, false)
	case updating:
		return w.k.validateHooks(ctx, w.req, w.obj, w.old, false, false)
	case statusUpdating:
		return w.k.validateHooks(ctx, w.req, w.obj, w.old, false, true)
	}
	return nil
}
