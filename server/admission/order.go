package admission

import (
	"reflect"

	"k8s.io/apiserver/pkg/admission"

	"github.com/apiloom/apiloom/server/admission/ownerrefs"
)

// The plugins of the server's chain, by name.
const (
	NamespaceLifecycle  = "NamespaceLifecycle"
	KindMutatingHooks   = "KindMutatingHooks"
	OwnerReferences     = "OwnerReferences"
	KindPrepare         = "KindPrepare"
	RBACEscalation      = "RBACEscalation"
	KindValidation      = "KindValidation"
	KindValidatingHooks = "KindValidatingHooks"
	// Upstream's plugins of dynamic admission, by upstream's names.
	MutatingAdmissionPolicy    = "MutatingAdmissionPolicy"
	MutatingAdmissionWebhook   = "MutatingAdmissionWebhook"
	ValidatingAdmissionPolicy  = "ValidatingAdmissionPolicy"
	ValidatingAdmissionWebhook = "ValidatingAdmissionWebhook"
	// ResourceQuota is upstream's quota admission, last as in
	// kube-apiserver: it counts what the other plugins let through.
	ResourceQuota = "ResourceQuota"
)

// ServerPlugins are the plugins the server gives its chain; nil for one it
// does not run (no namespaces served, no RBAC).
type ServerPlugins struct {
	// NamespaceLifecycle refuses writes into a namespace that does not
	// exist or is being terminated (server/admission/nslifecycle).
	NamespaceLifecycle admission.MutationInterface
	// RBACEscalation refuses RBAC objects that grant more than their
	// writer holds (server/admission/rbacescalation).
	RBACEscalation admission.ValidationInterface
	// Dynamic are the policies and webhooks that API objects configure
	// (server/admission/dynamic).
	Dynamic Dynamic
}

// Dynamic are k8s.io/apiserver's plugins of dynamic admission; nil for
// one the server does not run.
type Dynamic struct {
	MutatingPolicy    admission.MutationInterface
	MutatingWebhook   admission.MutationInterface
	ValidatingPolicy  admission.ValidationInterface
	ValidatingWebhook admission.ValidationInterface
	// ResourceQuota refuses creates beyond a namespace's quotas, which
	// ResourceQuota objects configure.
	ResourceQuota admission.ValidationInterface
}

// New returns the server's chain. The order is kube-apiserver's, written
// here once: mutating admission (the namespace's lifecycle, then the
// kind's mutating hooks, then MutatingAdmissionPolicy and the mutating
// webhooks), then owner references deduplicated after mutation, then what
// the kind's strategy prepares (BeforeCreate, BeforeUpdate); then
// validation: RBAC escalation (which kube-apiserver checks in RBAC's
// storage before its strategy validates), the kind's metadata, strategy
// and schema rules, its validating hooks, then ValidatingAdmissionPolicy
// and the validating webhooks, which thus see the object as it would be
// stored, and last ResourceQuota, so that only a write every other plugin
// admits is counted against a quota.
func New(p ServerPlugins) *Chain {
	var ps []Plugin
	add := func(name string, i admission.Interface) {
		if !isNil(i) {
			ps = append(ps, Plugin{name, i})
		}
	}
	add(NamespaceLifecycle, p.NamespaceLifecycle)
	add(KindMutatingHooks, kindMutatingHooks)
	if !isNil(p.Dynamic.MutatingPolicy) {
		add(MutatingAdmissionPolicy, observed{p.Dynamic.MutatingPolicy})
	}
	if !isNil(p.Dynamic.MutatingWebhook) {
		add(MutatingAdmissionWebhook, observed{p.Dynamic.MutatingWebhook})
	}
	add(OwnerReferences, ownerrefs.Plugin{})
	add(KindPrepare, kindPrepare)
	add(RBACEscalation, p.RBACEscalation)
	add(KindValidation, kindValidation)
	add(KindValidatingHooks, kindValidatingHooks)
	add(ValidatingAdmissionPolicy, p.Dynamic.ValidatingPolicy)
	add(ValidatingAdmissionWebhook, p.Dynamic.ValidatingWebhook)
	add(ResourceQuota, p.Dynamic.ResourceQuota)
	c := NewChain(ps...)
	c.observed = true
	return c
}

// isNil reports whether i is nil or holds a nil pointer: a plugin the
// server does not run.
func isNil(i admission.Interface) bool {
	if i == nil {
		return true
	}
	v := reflect.ValueOf(i)
	return v.Kind() == reflect.Pointer && v.IsNil()
}
