package strategy

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericrequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/warning"

	"github.com/apiloom/apiloom/server/hook"
	"github.com/apiloom/apiloom/server/resource"
)

// hookRequest is the hook.Request of op on obj in req, ctx's request.
func (k *Kind[O]) hookRequest(ctx context.Context, req Request, op hook.Operation, obj O) *hook.Request {
	u, _ := genericrequest.UserFrom(ctx)
	return hook.NewRequest(ctx, op, req.Subresource, req.DryRun, u, obj.GetNamespace(), obj.GetName(), k.hooks.Readers)
}

// warn adds warnings to the response of ctx's request, through
// k8s.io/apiserver's warning recorder.
func warn(ctx context.Context, warnings hook.Warnings) {
	for _, w := range warnings {
		warning.AddWarning(ctx, "", w)
	}
}

// callHooks runs fn, one point of the pipeline, bounded by the hook
// timeout: a panic or the deadline is a 500 InternalError, logged.
func (k *Kind[O]) callHooks(req *hook.Request, point string, fn func(req *hook.Request)) error {
	if err := hook.Call(req, k.hooks.CallTimeout(), fn); err != nil {
		slog.ErrorContext(req.Context(), "endpoints: hook failed", "resource", k.gr.String(),
			"namespace", req.Namespace, "name", req.Name, "hook", point, "err", err)
		return apierrors.NewInternalError(fmt.Errorf("%s hook of %s: %w", point, k.gvk.Kind, ErrorHead(err)))
	}
	return nil
}

// ErrorHead is err without the stack a panic's error carries (hook.Call):
// the client gets the panic's value, the log the stack.
func ErrorHead(err error) error {
	msg := err.Error()
	for i := range len(msg) {
		if msg[i] == '\n' {
			return fmt.Errorf("%s", msg[:i])
		}
	}
	return err
}

// hookForm runs the kind's mutating hooks (mutateHooks) on obj and
// returns the form to validate: f with what the hooks changed
// (hookedForm), so validation still sees what the request left out. A
// /status write (status) keeps only the status the hooks set. Without
// mutating hooks, or for a body that did not decode into the Go type
// (answered later), nothing runs and f is returned as it is.
func (k *Kind[O]) hookForm(ctx context.Context, r Request, obj, old O, f *Form, create, status bool) (*Form, error) {
	if f.DecodeError() != nil || !k.def.Hooks.Mutates() {
		return f, nil
	}
	var before map[string]any
	if f != nil {
		var err error
		if before, err = k.toUnstructured(obj); err != nil {
			return nil, err
		}
	}
	if err := k.mutateHooks(ctx, r, obj, old, create, status); err != nil {
		return nil, err
	}
	if status {
		keepOnlyStatus(k.def.CopyStatus, obj, old)
	}
	if f == nil {
		return nil, nil
	}
	after, err := k.toUnstructured(obj)
	if err != nil {
		return nil, err
	}
	return hookedForm(f, before, after), nil
}

// mutateHooks runs the kind's Default and PrepareFor* hooks on obj, the
// object a create (old the zero value), an update of old or, with
// status, a /status write stores.
func (k *Kind[O]) mutateHooks(ctx context.Context, r Request, obj, old O, create, status bool) error {
	hs := k.def.Hooks
	if !hs.Mutates() {
		return nil
	}
	op := hook.Update
	if create {
		op = hook.Create
	}
	req := k.hookRequest(ctx, r, op, obj)
	return k.callHooks(req, "mutating", func(req *hook.Request) {
		if hs.Default != nil {
			hs.Default(req, obj)
		}
		switch {
		case create:
			if hs.PrepareForCreate != nil {
				hs.PrepareForCreate(req, obj)
			}
		case status:
			if hs.PrepareForStatusUpdate != nil {
				hs.PrepareForStatusUpdate(req, obj, old)
			}
		default:
			if hs.PrepareForUpdate != nil {
				hs.PrepareForUpdate(req, obj, old)
			}
		}
	})
}

// validateHooks is the 422 of what the kind's validation hook finds wrong
// with obj (a create when create, else an update of old, of /status when
// status), its warnings added to the response; nil when nothing is.
func (k *Kind[O]) validateHooks(ctx context.Context, r Request, obj, old O, create, status bool) error {
	hs := k.def.Hooks
	if hs == nil {
		return nil
	}
	var validate func(req *hook.Request) (hook.Warnings, field.ErrorList)
	op := hook.Update
	switch {
	case create && hs.ValidateCreate != nil:
		op = hook.Create
		validate = func(req *hook.Request) (hook.Warnings, field.ErrorList) { return hs.ValidateCreate(req, obj) }
	case !create && status && hs.ValidateStatusUpdate != nil:
		validate = func(req *hook.Request) (hook.Warnings, field.ErrorList) {
			return hs.ValidateStatusUpdate(req, obj, old)
		}
	case !create && !status && hs.ValidateUpdate != nil:
		validate = func(req *hook.Request) (hook.Warnings, field.ErrorList) { return hs.ValidateUpdate(req, obj, old) }
	default:
		return nil
	}
	req := k.hookRequest(ctx, r, op, obj)
	var warnings hook.Warnings
	var errs field.ErrorList
	if err := k.callHooks(req, "validating", func(req *hook.Request) { warnings, errs = validate(req) }); err != nil {
		return err
	}
	warn(ctx, warnings)
	return k.Invalid(obj, errs)
}

// ValidateDeleteHook is the 403 Forbidden of the kind's ValidateDelete
// refusing to delete obj, the stored object, its warnings added to the
// response; nil when it allows it or there is none. 403 is what
// kube-apiserver's admission answers when it refuses a request
// (NamespaceLifecycle refusing to delete kube-system; a validating
// webhook's denial by default).
func (k *Kind[O]) ValidateDeleteHook(ctx context.Context, r Request, obj O) error {
	hs := k.def.Hooks
	if hs == nil || hs.ValidateDelete == nil {
		return nil
	}
	req := k.hookRequest(ctx, r, hook.Delete, obj)
	var warnings hook.Warnings
	var errs field.ErrorList
	if err := k.callHooks(req, "ValidateDelete", func(req *hook.Request) { warnings, errs = hs.ValidateDelete(req, obj) }); err != nil {
		return err
	}
	warn(ctx, warnings)
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewForbidden(k.gr, obj.GetName(), errs.ToAggregate())
}

// keepOnlyStatus makes obj, the object a /status write stores after its
// hooks ran, stored with obj's status and managed fields: a /status write
// changes nothing else, whatever a hook set (kube-apiserver's status
// strategies reset the rest the same way).
func keepOnlyStatus[O resource.Object](copyStatus func(dst, src O), obj, stored O) {
	restored := copyObject(stored)
	copyStatus(restored, obj)
	restored.SetManagedFields(obj.GetManagedFields())
	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(restored).Elem())
}
