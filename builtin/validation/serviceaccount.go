package validation

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ServiceAccount holds upstream's rules for a ServiceAccount, which are
// only its metadata's (ValidateServiceAccount checks the object meta with
// the DNS-subdomain name rule, which the server applies to every kind):
// nothing in secrets, imagePullSecrets or automountServiceAccountToken is
// refused, so there is nothing left to check here.
func ServiceAccount(obj, old *corev1.ServiceAccount) field.ErrorList {
	return nil
}
