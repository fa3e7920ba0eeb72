package strategy

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

// PLACEHOLDER: filled with upstream's defaults in this session.

func ValidatingAdmissionPolicy(obj *admissionregistrationv1.ValidatingAdmissionPolicy)               {}
func ValidatingAdmissionPolicyBinding(obj *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {}
func MutatingAdmissionPolicy(obj *admissionregistrationv1.MutatingAdmissionPolicy)                   {}
func MutatingAdmissionPolicyBinding(obj *admissionregistrationv1.MutatingAdmissionPolicyBinding)     {}
func ValidatingWebhookConfiguration(obj *admissionregistrationv1.ValidatingWebhookConfiguration)     {}
func MutatingWebhookConfiguration(obj *admissionregistrationv1.MutatingWebhookConfiguration)         {}
