package strategy

import (
	corev1 "k8s.io/api/core/v1"
)

// ServiceAccountPrepare keeps only the name of each secrets reference, as
// upstream's strategy does on create and update (cleanSecretReferences):
// the other fields of an ObjectReference mean nothing there and would be
// stored as the client sent them.
func ServiceAccountPrepare(obj, _ *corev1.ServiceAccount) {
	for i, s := range obj.Secrets {
		obj.Secrets[i] = corev1.ObjectReference{Name: s.Name}
	}
}
