package endpoints

import (
	"context"
	"log/slog"
	"maps"
	"net/http"
	"slices"

	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	"k8s.io/apiserver/pkg/audit"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	k8sadmission "k8s.io/apiserver/pkg/admission"
	genericrequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/apiloom/apiloom/server/admission"
	"github.com/apiloom/apiloom/server/endpoints/auditlog"
	"github.com/apiloom/apiloom/server/endpoints/request"
	"github.com/apiloom/apiloom/server/resource"
)

// Every write path reaches the server's admission chain (package
// server/admission) through admit: create, update, each patch type and
// server-side apply (prepareCreate, prepareUpdate), /status
// (prepareStatusUpdate), /scale (scaledObject, through prepareUpdate),
// /finalize (prepareFinalize), delete and each item of a
// deletecollection (admitDelete before the object is read, then
// validateDelete on it), dry run or not.

// standardChain is the chain of a resource the server gives none: the
// kind's own stages, without the server's plugins.
var standardChain = admission.New(admission.ServerPlugins{})

// WithAdmission makes c the admission chain of the resource's writes
// (admission.New builds the server's). Without it, writes go through the
// kind's own stages alone.
func WithAdmission(c *admission.Chain) Option {
	return func(cfg *handlerConfig) { cfg.admission = c }
}

// admit runs the chain's mutating phase, then its validating phase, on a
// write of obj over old (nil for a create) with stages, the kind's.
func (h *handler[O]) admit(ctx context.Context, op k8sadmission.Operation, obj, old runtime.Object, stages admission.KindStages) error {
	a := h.attributes(ctx, op, obj, old, stages)
	defer auditAnnotations(ctx, slog.Default(), a)
	if err := h.admission.Admit(ctx, a, nil); err != nil {
		return err
	}
	return h.admission.Validate(ctx, a, nil)
}

// auditAnnotations puts the audit annotations admission added to a (a
// policy's auditAnnotations and Audit action, a webhook's, under the keys
// upstream's plugins give them) into the request's audit event, as
// kube-apiserver's admission chain does, those its level allows. A
// request the server does not audit at all (audit off) has them logged
// instead, with its Audit-ID, so that they are not lost; one the policy
// gives level None has them dropped, as kube-apiserver does.
func auditAnnotations(ctx context.Context, log *slog.Logger, a *admission.Attributes) {
	if auditlog.Audited(ctx) {
		audit.AddAuditAnnotationsMap(ctx, a.GetAnnotations(auditlog.Level(ctx)))
		return
	}
	if auditlog.InUse() {
		if ac := audit.AuditContextFrom(ctx); ac != nil && ac.GetEventLevel() == auditinternal.LevelNone {
			return // audited, at level None
		}
	}
	logAuditAnnotations(ctx, log, a)
}

// logAuditAnnotations logs the audit annotations admission added to a.
func logAuditAnnotations(ctx context.Context, log *slog.Logger, a *admission.Attributes) {
	annotations := a.GetAnnotations(auditinternal.LevelMetadata)
	if len(annotations) == 0 {
		return
	}
	args := make([]any, 0, 2*len(annotations)+4)
	args = append(args, "resource", a.GetResource().GroupResource().String(), "name", a.GetName())
	for _, k := range slices.Sorted(maps.Keys(annotations)) {
		args = append(args, k, annotations[k])
	}
	log.InfoContext(ctx, "admission audit annotations", args...)
}

// attributes are the admission attributes of a write of obj over old in
// ctx's request; obj and old are nil where there is none (a create's old,
// a delete's object), never a typed nil.
func (h *handler[O]) attributes(ctx context.Context, op k8sadmission.Operation, obj, old runtime.Object, stages admission.KindStages) *admission.Attributes {
	named := obj
	if named == nil {
		named = old
	}
	var name, namespace string
	if m, err := meta.Accessor(named); err == nil {
		name, namespace = m.GetName(), m.GetNamespace()
	}
	return h.attributesOf(ctx, op, name, namespace, obj, old, stages)
}

// attributesOf are the admission attributes of a write of obj over old,
// named name in namespace.
func (h *handler[O]) attributesOf(ctx context.Context, op k8sadmission.Operation, name, namespace string, obj, old runtime.Object, stages admission.KindStages) *admission.Attributes {
	req := request.WriteOf(ctx)
	u, _ := genericrequest.UserFrom(ctx)
	// kube-apiserver's admission namespace of a Namespace's write is the
	// Namespace's name: the namespace selectors of policies and webhooks
	// look it up, and a webhook's AdmissionReview carries it (the
	// namespace lifecycle leaves a Namespace's own create and update
	// alone, as upstream's).
	if h.gr.Group == "" && h.gr.Resource == "namespaces" {
		namespace = name
	}
	rec := k8sadmission.NewAttributesRecord(obj, old, h.gvk, namespace, name, h.gr.WithVersion(h.gvk.Version),
		req.Subresource, op, req.Options(op), req.DryRun, u)
	return &admission.Attributes{Attributes: rec, Stages: stages}
}

// deleteStages are a delete's KindStages: the kind's ValidateDelete hook on
// the stored object.
type deleteStages[O resource.Object] struct {
	h      *handler[O]
	stored O
}

func (d deleteStages[O]) MutateHooks(context.Context) error { return nil }
func (d deleteStages[O]) Prepare(context.Context) error     { return nil }
func (d deleteStages[O]) Validate(context.Context) error    { return nil }
func (d deleteStages[O]) ValidateHooks(ctx context.Context) error {
	return d.h.kind.ValidateDeleteHook(ctx, d.h.strategyRequest(ctx), d.stored)
}

// admitDelete runs the chain's mutating phase on a DELETE of the object
// name in namespace that cannot be read (the unsafe delete of a corrupt
// object), by its name alone.
func (h *handler[O]) admitDelete(ctx context.Context, name, namespace string) error {
	return h.admission.Admit(ctx, h.attributesOf(ctx, k8sadmission.Delete, name, namespace, nil, nil, nil), nil)
}

// admitStoredDelete runs the chain's mutating, then validating, phase on
// the DELETE of stored, the object as read: kube-apiserver's store admits
// a delete so (rest.AdmissionToValidateObjectDeleteFunc), so webhooks and
// policies see the old object, and a DELETE of a missing object is 404
// without admission. NamespaceLifecycle refuses here to delete an
// immortal namespace.
func (h *handler[O]) admitStoredDelete(ctx context.Context, stored O) error {
	a := h.attributesOf(ctx, k8sadmission.Delete, stored.GetName(), stored.GetNamespace(), nil, stored, deleteStages[O]{h: h, stored: stored})
	defer logAuditAnnotations(ctx, slog.Default(), a)
	if err := h.admission.Admit(ctx, a, nil); err != nil {
		return err
	}
	return h.admission.Validate(ctx, a, nil)
}

// withAdmission is r with its request.Write in its context, for a write
// (reads have no admission, and do without the allocations).
func (h *handler[O]) withAdmission(w http.ResponseWriter, r *http.Request, rt route) *http.Request {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return r
	}
	var subresource string
	switch {
	case rt.status:
		subresource = "status"
	case rt.scale:
		subresource = "scale"
	case rt.finalize:
		subresource = "finalize"
	}
	return request.WithWrite(r, w, subresource)
}
