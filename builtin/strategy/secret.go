package strategy

import (
	corev1 "k8s.io/api/core/v1"
)

// Secret defaults a Secret as kube-apiserver decodes one: no type is
// Opaque, and stringData, a write-only convenience, is merged into data
// (its keys winning) and dropped, so it is never stored nor answered.
func Secret(obj *corev1.Secret) {
	if obj.Type == "" {
		obj.Type = corev1.SecretTypeOpaque
	}
	if len(obj.StringData) > 0 {
		if obj.Data == nil {
			obj.Data = make(map[string][]byte, len(obj.StringData))
		}
		for k, v := range obj.StringData {
			obj.Data[k] = []byte(v)
		}
	}
	obj.StringData = nil
}
