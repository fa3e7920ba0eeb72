package validation

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// NamespaceName is the rule of Namespace names, in place of the
// DNS-subdomain rule of other kinds: a DNS label (RFC 1123), so an
// upper-case name gets the label's message and one with a dot "must not
// contain dots".
func NamespaceName(name string, prefix bool) []string {
	return apivalidation.ValidateNamespaceName(name, prefix)
}

// Namespace: every entry of spec.finalizers is a finalizer name
// (finalizerName). As upstream's ValidateNamespace, the causes name the
// list, spec.finalizers, not the entry. The name is checked by
// NamespaceName.
func Namespace(obj, _ *corev1.Namespace) field.ErrorList {
	var errs field.ErrorList
	finalizers := field.NewPath("spec", "finalizers")
	for _, f := range obj.Spec.Finalizers {
		errs = append(errs, finalizerName(string(f), finalizers)...)
	}
	return errs
}

// NamespaceFinalize is the rule of a write to namespaces/NAME/finalize:
// every entry of spec.finalizers is a finalizer name, each cause naming
// its entry (spec.finalizers[i]), as upstream's
// ValidateNamespaceFinalizeUpdate.
func NamespaceFinalize(obj, _ *corev1.Namespace) field.ErrorList {
	var errs field.ErrorList
	finalizers := field.NewPath("spec", "finalizers")
	for i, f := range obj.Spec.Finalizers {
		errs = append(errs, finalizerName(string(f), finalizers.Index(i))...)
	}
	return errs
}

// NamespaceStatus is the rule of a write to namespaces/NAME/status: the
// phase is Active while the Namespace has no deletionTimestamp and
// Terminating once it has one (upstream's ValidateNamespaceStatusUpdate,
// whose path spells the field "Phase").
func NamespaceStatus(obj, _ *corev1.Namespace) field.ErrorList {
	phase := field.NewPath("status", "Phase")
	switch deleting := obj.DeletionTimestamp != nil; {
	case !deleting && obj.Status.Phase != corev1.NamespaceActive:
		return field.ErrorList{field.Invalid(phase, obj.Status.Phase, "may only be 'Active' if `deletionTimestamp` is empty")}
	case deleting && obj.Status.Phase != corev1.NamespaceTerminating:
		return field.ErrorList{field.Invalid(phase, obj.Status.Phase, "may only be 'Terminating' if `deletionTimestamp` is not empty")}
	}
	return nil
}

// finalizerName is what is wrong with a Namespace finalizer name at path:
// it is a qualified name, and one without a "/" is one of the standard
// finalizers ("kubernetes", "orphan", "foregroundDeletion"). A name can
// fail both, which gives two causes, as upstream's.
func finalizerName(name string, path *field.Path) field.ErrorList {
	errs := apivalidation.ValidateFinalizerName(name, path)
	if !strings.Contains(name, "/") && !standardFinalizer(name) {
		errs = append(errs, field.Invalid(path, name, "name is neither a standard finalizer name nor is it fully qualified"))
	}
	return errs
}

// standardFinalizer reports whether name is one of the finalizers that
// need no domain: the namespace controller's and the garbage collector's.
func standardFinalizer(name string) bool {
	switch name {
	case string(corev1.FinalizerKubernetes), metav1.FinalizerOrphanDependents, metav1.FinalizerDeleteDependents:
		return true
	}
	return false
}
