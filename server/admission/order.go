package admission

import (
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
}

// New returns the server's chain. The order is kube-apiserver's, written
// here once: mutating admission (the namespace's lifecycle, then the
// kind's mutating hooks, where MutatingAdmissionPolicy and mutating
// webhooks will follow), then owner references deduplicated after
// mutation, then what the kind's strategy prepares (BeforeCreate,
// BeforeUpdate); then validation: RBAC escalation (which kube-apiserver
// checks in RBAC's storage before its strategy validates), the kind's
// metadata, strategy and schema rules, then its validating hooks (where
// ValidatingAdmissionPolicy and validating webhooks will follow).
func New(p ServerPlugins) *Chain {
	var ps []Plugin
	if p.NamespaceLifecycle != nil {
		ps = append(ps, Plugin{NamespaceLifecycle, p.NamespaceLifecycle})
	}
	ps = append(ps,
		Plugin{KindMutatingHooks, kindMutatingHooks},
		Plugin{OwnerReferences, ownerrefs.Plugin{}},
		Plugin{KindPrepare, kindPrepare},
	)
	if p.RBACEscalation != nil {
		ps = append(ps, Plugin{RBACEscalation, p.RBACEscalation})
	}
	return NewChain(append(ps,
		Plugin{KindValidation, kindValidation},
		Plugin{KindValidatingHooks, kindValidatingHooks},
	)...)
}
