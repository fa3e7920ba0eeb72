package registry

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/apiloom/apiloom/server/admission/nslifecycle"
	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
)

// ServesNamespaces reports whether r serves core/v1 Namespaces, with
// which come the namespace lifecycle admission, the system namespaces
// and the namespace controller.
func (r *Registry) ServesNamespaces() bool {
	for _, e := range r.entries {
		if isNamespaces(e.Info) {
			return true
		}
	}
	return false
}

// isNamespaces reports whether info is core/v1's namespaces.
func isNamespaces(info *resource.Info) bool {
	return info.Group == "" && info.Version == "v1" && info.Plural == "namespaces"
}

// namespaceLifecycle is the admission every resource of r is built with:
// the namespace lifecycle when r serves namespaces, nil otherwise.
func (r *Registry) namespaceLifecycle() *nslifecycle.Lifecycle {
	if !r.ServesNamespaces() {
		return nil
	}
	return nslifecycle.New()
}

// bindNamespaces makes iface, when it is the namespaces' storage, where
// the namespace lifecycle reads them. Requests come only once every
// resource is built, so it is bound before it admits anything.
func (sh shared) bindNamespaces(iface any) {
	if ns, ok := iface.(storage.Interface[*corev1.Namespace]); ok && sh.namespaces != nil {
		sh.namespaces.Bind(ns)
	}
}
