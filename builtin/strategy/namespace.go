package strategy

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/apiloom/apiloom/builtin/validation"
	"github.com/apiloom/apiloom/server/resource"
)

// Namespace defaults a Namespace as kube-apiserver decodes one: the label
// kubernetes.io/metadata.name is its name, on every write (a write that
// removes or changes it gets it back).
func Namespace(obj *corev1.Namespace) {
	setNameLabel(obj)
}

// setNameLabel sets the kubernetes.io/metadata.name label to obj's name,
// when it has one (a create by generateName gets it in NamespacePrepare).
func setNameLabel(obj *corev1.Namespace) {
	if obj.Name == "" {
		return
	}
	if obj.Labels == nil {
		obj.Labels = map[string]string{}
	}
	obj.Labels[corev1.LabelMetadataName] = obj.Name
}

// NamespacePrepare is kube-apiserver's namespace strategy: a created
// Namespace is Active and has the "kubernetes" finalizer (appended to any
// it was given), which the namespace controller removes once the
// namespace's content is deleted; an update keeps the stored
// spec.finalizers, which only namespaces/finalize changes.
func NamespacePrepare(obj, old *corev1.Namespace) {
	if old == nil {
		obj.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
		if !slices.Contains(obj.Spec.Finalizers, corev1.FinalizerKubernetes) {
			obj.Spec.Finalizers = append(obj.Spec.Finalizers, corev1.FinalizerKubernetes)
		}
	} else {
		obj.Spec.Finalizers = slices.Clone(old.Spec.Finalizers)
	}
	setNameLabel(obj)
}

// NamespaceFinalize is a Namespace's finalize lifecycle: spec.finalizers
// keep a deleted Namespace, which is Terminating from its first DELETE on,
// until namespaces/finalize empties them; that subresource's writes are
// held to upstream's finalize rules (validation.NamespaceFinalize).
var NamespaceFinalize = &resource.Finalize[*corev1.Namespace]{
	Copy: func(dst, src *corev1.Namespace) {
		dst.Spec.Finalizers = slices.Clone(src.Spec.Finalizers)
	},
	Pending: func(obj *corev1.Namespace) bool { return len(obj.Spec.Finalizers) > 0 },
	MarkDeleting: func(obj *corev1.Namespace) {
		obj.Status.Phase = corev1.NamespaceTerminating
	},
	Validate: validation.NamespaceFinalize,
}
