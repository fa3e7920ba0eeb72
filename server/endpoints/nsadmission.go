package endpoints

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiloom/apiloom/server/resource"
)

// NamespaceLifecycle is kube-apiserver's NamespaceLifecycle admission as
// the handlers call it (package server/admission/nslifecycle implements
// it): every write but a delete of a namespaced object is admitted by its
// namespace, and a namespace's delete by its name.
type NamespaceLifecycle interface {
	// Admit is nil when an object of gr named name may be written in
	// namespace ns, created when create is true, updated otherwise; else
	// the API error: 404 NotFound for the namespace when it does not exist,
	// 403 Forbidden for a create into a namespace being terminated.
	Admit(ctx context.Context, gr schema.GroupResource, name, ns string, create bool) error
	// AdmitNamespaceDelete is nil when the namespace name may be deleted,
	// else 403 Forbidden (default, kube-system and kube-public may not).
	AdmitNamespaceDelete(name string) error
}

// WithNamespaceLifecycle admits the resource's writes by l (only when the
// server serves namespaces).
func WithNamespaceLifecycle(l NamespaceLifecycle) Option {
	return func(c *handlerConfig) { c.namespaces = l }
}

// admitNamespace admits a write of obj (create, or an update) by its
// namespace's lifecycle: nothing to check for cluster-scoped kinds or
// without the admission.
func (h *handler[O]) admitNamespace(ctx context.Context, obj O, create bool) error {
	if h.namespaces == nil || !h.def.Namespaced {
		return nil
	}
	return h.namespaces.Admit(ctx, h.gr, obj.GetName(), obj.GetNamespace(), create)
}

// admitDelete admits a DELETE through rt, before anything is read: a
// namespace's, by the lifecycle.
func (h *handler[O]) admitDelete(rt route) error {
	if h.namespaces == nil || !isNamespaceKind(&h.def.Info) || rt.name == "" {
		return nil
	}
	return h.namespaces.AdmitNamespaceDelete(rt.name)
}

// isNamespaceKind reports whether info is core/v1's Namespace.
func isNamespaceKind(info *resource.Info) bool {
	return info.Group == "" && info.Kind == "Namespace"
}
