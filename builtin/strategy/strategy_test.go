package strategy

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSecret(t *testing.T) {
	s := &corev1.Secret{Data: map[string][]byte{"a": []byte("0"), "b": []byte("2")}, StringData: map[string]string{"a": "1"}}
	Secret(s)
	if s.Type != corev1.SecretTypeOpaque || s.StringData != nil || string(s.Data["a"]) != "1" || string(s.Data["b"]) != "2" {
		t.Fatalf("defaulted %+v", s)
	}
	typed := &corev1.Secret{Type: corev1.SecretTypeBasicAuth, StringData: map[string]string{"username": "u"}}
	Secret(typed)
	if typed.Type != corev1.SecretTypeBasicAuth || string(typed.Data["username"]) != "u" {
		t.Fatalf("typed secret %+v", typed)
	}
}

func TestNamespacePrepare(t *testing.T) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a"},
		Spec:   corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"x/y"}},
		Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}
	NamespacePrepare(ns, nil)
	if ns.Status.Phase != corev1.NamespaceActive || !slices.Equal(ns.Spec.Finalizers, []corev1.FinalizerName{"x/y", corev1.FinalizerKubernetes}) ||
		ns.Labels[corev1.LabelMetadataName] != "a" {
		t.Fatalf("created %+v", ns)
	}
	again := ns.DeepCopy()
	NamespacePrepare(again, nil) // "kubernetes" is not added twice
	if len(again.Spec.Finalizers) != 2 {
		t.Fatalf("finalizers %v", again.Spec.Finalizers)
	}
	upd := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a"}}
	NamespacePrepare(upd, ns)
	if !slices.Equal(upd.Spec.Finalizers, ns.Spec.Finalizers) || upd.Labels[corev1.LabelMetadataName] != "a" {
		t.Fatalf("updated %+v", upd)
	}
}

func TestNamespaceFinalize(t *testing.T) {
	ns := &corev1.Namespace{Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{corev1.FinalizerKubernetes}}}
	if !NamespaceFinalize.Pending(ns) {
		t.Fatal("not pending with the kubernetes finalizer")
	}
	NamespaceFinalize.MarkDeleting(ns)
	NamespaceFinalize.Copy(ns, &corev1.Namespace{})
	if ns.Status.Phase != corev1.NamespaceTerminating || NamespaceFinalize.Pending(ns) {
		t.Fatalf("%+v", ns)
	}
}
