package validation

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// PLACEHOLDER: filled with upstream's rules in this session.

func ValidatingAdmissionPolicy(obj, old *admissionregistrationv1.ValidatingAdmissionPolicy) field.ErrorList {
	return nil
}

func ValidatingAdmissionPolicyStatus(obj, old *admissionregistrationv1.ValidatingAdmissionPolicy) field.ErrorList {
	return nil
}

func ValidatingAdmissionPolicyBinding(obj, old *admissionregistrationv1.ValidatingAdmissionPolicyBinding) field.ErrorList {
	return nil
}

func MutatingAdmissionPolicy(obj, old *admissionregistrationv1.MutatingAdmissionPolicy) field.ErrorList {
	return nil
}

func MutatingAdmissionPolicyBinding(obj, old *admissionregistrationv1.MutatingAdmissionPolicyBinding) field.ErrorList {
	return nil
}

func ValidatingWebhookConfiguration(obj, old *admissionregistrationv1.ValidatingWebhookConfiguration) field.ErrorList {
	return nil
}

func MutatingWebhookConfiguration(obj, old *admissionregistrationv1.MutatingWebhookConfiguration) field.ErrorList {
	return nil
}
