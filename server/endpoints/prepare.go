package endpoints

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
	k8sadmission "k8s.io/apiserver/pkg/admission"

	"github.com/apiloom/apiloom/server/endpoints/request"
	"github.com/apiloom/apiloom/server/endpoints/strategy"
)

// The writes that store an object (create, update, /status, /finalize)
// turn the request's object into the one to store through the admission
// chain (admit.go): each builds the write's strategy.Write, the chain's
// KindStages for it, and the chain runs them in its order, between the
// server's plugins. What each stage does is package strategy's.

// form is a request's object as a CRD would validate it (strategy.Form).
type form = strategy.Form

// prepareCreate turns a decoded create body, f its form, into the object
// to store (strategy.Kind.Create says how).
func (h *handler[O]) prepareCreate(ctx context.Context, obj O, f *form, namespace string, now time.Time) error {
	if err := h.kind.EnsureNamespace(obj, namespace); err != nil {
		return err
	}
	return h.admit(ctx, k8sadmission.Create, obj, nil, h.kind.Create(h.strategyRequest(ctx), obj, f, now))
}

// prepareUpdate turns the object a client sent (or a patch produced), f
// its form, into the object to store over current, for a write to the
// main resource or, with the object /scale changed, to /scale. The
// request must name current's resourceVersion.
func (h *handler[O]) prepareUpdate(ctx context.Context, obj, current O, f *form, namespace string) error {
	if err := h.kind.CheckResourceVersion(obj, current); err != nil {
		return err
	}
	if err := h.kind.EnsureNamespace(obj, namespace); err != nil {
		return err
	}
	return h.admit(ctx, k8sadmission.Update, obj, current, h.kind.Update(h.strategyRequest(ctx), obj, current, f))
}

// prepareStatusUpdate returns the object to store for a write to /status
// of obj, f its form: current, the caller's copy of the stored object,
// with obj's status. The resourceVersion rules are the main resource's.
func (h *handler[O]) prepareStatusUpdate(ctx context.Context, obj, current O, f *form) (O, error) {
	var zero O
	if err := h.kind.CheckResourceVersion(obj, current); err != nil {
		return zero, err
	}
	stored := copyObject(current)
	w := h.kind.StatusUpdate(h.strategyRequest(ctx), obj, current, stored, f)
	if err := h.admit(ctx, k8sadmission.Update, current, stored, w); err != nil {
		return zero, err
	}
	return current, nil
}

// prepareFinalize returns the object a PUT of .../finalize stores over
// current, the caller's copy of the stored object, which becomes the
// result: its own finalizers and the metadata a client writes taken from
// obj.
func (h *handler[O]) prepareFinalize(ctx context.Context, obj, current O) (O, error) {
	var zero O
	if err := h.kind.CheckResourceVersion(obj, current); err != nil {
		return zero, err
	}
	stored := copyObject(current)
	w := h.kind.Finalize(h.strategyRequest(ctx), obj, current, stored)
	if err := h.admit(ctx, k8sadmission.Update, current, stored, w); err != nil {
		return zero, err
	}
	return current, nil
}

// strategyRequest is what the kind's hooks know of ctx's write.
func (h *handler[O]) strategyRequest(ctx context.Context) strategy.Request {
	req := request.WriteOf(ctx)
	return strategy.Request{Subresource: req.Subresource, DryRun: req.DryRun}
}

// decodeForm is the object a request's JSON content decodes into, with
// its form (strategy.Kind.DecodeForm).
func (h *handler[O]) decodeForm(content map[string]any, typed O, typedErr error) (O, *form, error) {
	return h.kind.DecodeForm(content, typed, typedErr)
}

// invalid is the 422 Invalid for the violations errs of obj; nil for none.
func (h *handler[O]) invalid(obj O, errs field.ErrorList) error {
	return h.kind.Invalid(obj, errs)
}
