package endpoints

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericrequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/apiloom/apiloom/server/endpoints/responsewriters"
	"github.com/apiloom/apiloom/server/hook"
	"github.com/apiloom/apiloom/server/resource"
)

// A kind's hooks (resource.Definition.Hooks, package server/hook) run in
// the three functions every write path goes through, so no path calls
// them itself: prepareCreate, prepareUpdate (main resource and /scale)
// and prepareStatusUpdate run the mutating hooks (Default, then
// PrepareFor*) first and the validating ones once the metadata rules,
// the schema and its CEL rules accept the object; deleteObject (delete
// and deletecollection) runs ValidateDelete on the stored object. What
// each call may not know from its arguments (the subresource, dryRun,
// where warnings go) the request carries in its context (withAdmission).

// hookConfig is the configuration of hooks, from WithHooks.
type hookConfig struct {
	readers hook.Readers
	timeout time.Duration
}

// WithHooks gives the resource's hooks read access to every served kind
// through readers and bounds each point of a request's hooks by timeout
// (hook.DefaultTimeout when not positive).
func WithHooks(readers hook.Readers, timeout time.Duration) Option {
	return func(c *handlerConfig) { c.hooks = hookConfig{readers: readers, timeout: timeout} }
}

// admission is what a write's admission (its hooks, the server's own
// checks) knows of it beyond the object, and where its warnings go: set
// in the context of every write by serve.
type admission struct {
	w           http.ResponseWriter
	subresource string
	dryRun      bool
	// warned are the warnings already added to w's header.
	warned map[string]bool
}

type admissionKey struct{}

// withAdmission is r's context with its admission, for a write (reads
// have no admission, and do without the allocations).
func (h *handler[O]) withAdmission(w http.ResponseWriter, r *http.Request, rt route) *http.Request {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return r
	}
	a := &admission{w: w, dryRun: len(r.URL.Query()["dryRun"]) > 0}
	switch {
	case rt.status:
		a.subresource = "status"
	case rt.scale:
		a.subresource = "scale"
	case rt.finalize:
		a.subresource = "finalize"
	}
	return r.WithContext(context.WithValue(r.Context(), admissionKey{}, a))
}

// setDryRun records dryRun from DeleteOptions, which may come in a body.
func setDryRun(ctx context.Context, dryRun bool) {
	if a, ok := ctx.Value(admissionKey{}).(*admission); ok {
		a.dryRun = dryRun
	}
}

// warnIn adds warnings to the response of the write ctx belongs to, once
// each; nothing outside a write.
func warnIn(ctx context.Context, warnings ...string) {
	if a, ok := ctx.Value(admissionKey{}).(*admission); ok {
		a.warn(warnings)
	}
}

// warn adds warnings to the response's Warning headers, once each.
func (a *admission) warn(warnings hook.Warnings) {
	for _, msg := range warnings {
		if a.warned[msg] {
			continue
		}
		if a.warned == nil {
			a.warned = map[string]bool{}
		}
		a.warned[msg] = true
		responsewriters.WriteWarnings(a.w, []string{msg})
	}
}

// hookRequest is the hook.Request of op on obj in ctx's request.
func (h *handler[O]) hookRequest(ctx context.Context, op hook.Operation, obj O) (*hook.Request, *admission) {
	a, _ := ctx.Value(admissionKey{}).(*admission)
	if a == nil {
		a = &admission{}
	}
	u, _ := genericrequest.UserFrom(ctx)
	return hook.NewRequest(ctx, op, a.subresource, a.dryRun, u, obj.GetNamespace(), obj.GetName(), h.hooks.readers), a
}

// callHooks runs fn, one point of the pipeline, bounded by the hook
// timeout: a panic or the deadline is a 500 InternalError, logged.
func (h *handler[O]) callHooks(req *hook.Request, point string, fn func(req *hook.Request)) error {
	timeout := h.hooks.timeout
	if timeout <= 0 {
		timeout = hook.DefaultTimeout
	}
	if err := hook.Call(req, timeout, fn); err != nil {
		slog.ErrorContext(req.Context(), "endpoints: hook failed", "resource", h.gr.String(),
			"namespace", req.Namespace, "name", req.Name, "hook", point, "err", err)
		return apierrors.NewInternalError(fmt.Errorf("%s hook of %s: %w", point, h.gvk.Kind, errHead(err)))
	}
	return nil
}

// errHead is err without the stack a panic's error carries: the client
// gets the panic's value, the log the stack.
func errHead(err error) error {
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
func (h *handler[O]) hookForm(ctx context.Context, obj, old O, f *form, create, status bool) (*form, error) {
	if f.decodeError() != nil || !h.def.Hooks.Mutates() {
		return f, nil
	}
	var before map[string]any
	if f != nil {
		var err error
		if before, err = h.toUnstructured(obj); err != nil {
			return nil, err
		}
	}
	if err := h.mutateHooks(ctx, obj, old, create, status); err != nil {
		return nil, err
	}
	if status {
		keepOnlyStatus(h.def.CopyStatus, obj, old)
	}
	if f == nil {
		return nil, nil
	}
	after, err := h.toUnstructured(obj)
	if err != nil {
		return nil, err
	}
	return hookedForm(f, before, after), nil
}

// mutateHooks runs the kind's Default and PrepareFor* hooks on obj, the
// object a create (old the zero value), an update of old or, with
// status, a /status write stores.
func (h *handler[O]) mutateHooks(ctx context.Context, obj, old O, create, status bool) error {
	hs := h.def.Hooks
	if !hs.Mutates() {
		return nil
	}
	op := hook.Update
	if create {
		op = hook.Create
	}
	req, _ := h.hookRequest(ctx, op, obj)
	return h.callHooks(req, "mutating", func(req *hook.Request) {
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
func (h *handler[O]) validateHooks(ctx context.Context, obj, old O, create, status bool) error {
	hs := h.def.Hooks
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
	req, a := h.hookRequest(ctx, op, obj)
	var warnings hook.Warnings
	var errs field.ErrorList
	if err := h.callHooks(req, "validating", func(req *hook.Request) { warnings, errs = validate(req) }); err != nil {
		return err
	}
	a.warn(warnings)
	return h.invalid(obj, errs)
}

// validateDeleteHook is the 403 Forbidden of the kind's ValidateDelete
// refusing to delete obj, the stored object, its warnings added to the
// response; nil when it allows it or there is none. 403 is what
// kube-apiserver's admission answers when it refuses a request
// (NamespaceLifecycle refusing to delete kube-system; a validating
// webhook's denial by default).
func (h *handler[O]) validateDeleteHook(ctx context.Context, obj O) error {
	hs := h.def.Hooks
	if hs == nil || hs.ValidateDelete == nil {
		return nil
	}
	req, a := h.hookRequest(ctx, hook.Delete, obj)
	var warnings hook.Warnings
	var errs field.ErrorList
	if err := h.callHooks(req, "ValidateDelete", func(req *hook.Request) { warnings, errs = hs.ValidateDelete(req, obj) }); err != nil {
		return err
	}
	a.warn(warnings)
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewForbidden(h.gr, obj.GetName(), errs.ToAggregate())
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
