package strategy

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The defaults kube-apiserver applies when it decodes admissionregistration
// v1 (k8s.io/kubernetes pkg/apis/admissionregistration/v1 defaults.go and
// the generated walk over the nested types): clients read them back, and
// the rules in builtin/validation require some of them (a policy's
// failurePolicy, its matchConstraints' matchPolicy and selectors), so a
// request that leaves them out is valid.

// ValidatingWebhookConfiguration defaults each webhook: failurePolicy
// Fail, matchPolicy Equivalent, empty (match-all) namespace and object
// selectors, timeoutSeconds 10, a service's port 443 and a rule's scope
// "*".
func ValidatingWebhookConfiguration(obj *admissionregistrationv1.ValidatingWebhookConfiguration) {
	for i := range obj.Webhooks {
		w := &obj.Webhooks[i]
		webhookDefaults(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds)
		webhookClientDefaults(&w.ClientConfig, w.Rules)
	}
}

// MutatingWebhookConfiguration defaults each webhook as a validating one,
// and its reinvocationPolicy to Never.
func MutatingWebhookConfiguration(obj *admissionregistrationv1.MutatingWebhookConfiguration) {
	for i := range obj.Webhooks {
		w := &obj.Webhooks[i]
		webhookDefaults(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds)
		if w.ReinvocationPolicy == nil {
			w.ReinvocationPolicy = ptr.To(admissionregistrationv1.NeverReinvocationPolicy)
		}
		webhookClientDefaults(&w.ClientConfig, w.Rules)
	}
}

// webhookDefaults sets a webhook's fields that upstream defaults, where
// they are unset.
func webhookDefaults(failure **admissionregistrationv1.FailurePolicyType, match **admissionregistrationv1.MatchPolicyType,
	namespaces, objects **metav1.LabelSelector, timeout **int32) {
	if *failure == nil {
		*failure = ptr.To(admissionregistrationv1.Fail)
	}
	if *match == nil {
		*match = ptr.To(admissionregistrationv1.Equivalent)
	}
	if *namespaces == nil {
		*namespaces = &metav1.LabelSelector{}
	}
	if *objects == nil {
		*objects = &metav1.LabelSelector{}
	}
	if *timeout == nil {
		*timeout = ptr.To[int32](10)
	}
}

// webhookClientDefaults gives a service reference port 443 and each rule
// the scope "*".
func webhookClientDefaults(cc *admissionregistrationv1.WebhookClientConfig, rules []admissionregistrationv1.RuleWithOperations) {
	if cc.Service != nil && cc.Service.Port == nil {
		cc.Service.Port = ptr.To[int32](443)
	}
	for i := range rules {
		ruleDefaults(&rules[i].Rule)
	}
}

// ruleDefaults gives a rule without scope the scope "*".
func ruleDefaults(rule *admissionregistrationv1.Rule) {
	if rule.Scope == nil {
		rule.Scope = ptr.To(admissionregistrationv1.AllScopes)
	}
}

// matchResourcesDefaults defaults a policy's matchConstraints or a
// binding's matchResources: matchPolicy Equivalent, empty selectors, and
// the scope of each resource rule and excluded one.
func matchResourcesDefaults(m *admissionregistrationv1.MatchResources) {
	if m == nil {
		return
	}
	if m.MatchPolicy == nil {
		m.MatchPolicy = ptr.To(admissionregistrationv1.Equivalent)
	}
	if m.NamespaceSelector == nil {
		m.NamespaceSelector = &metav1.LabelSelector{}
	}
	if m.ObjectSelector == nil {
		m.ObjectSelector = &metav1.LabelSelector{}
	}
	for i := range m.ResourceRules {
		ruleDefaults(&m.ResourceRules[i].Rule)
	}
	for i := range m.ExcludeResourceRules {
		ruleDefaults(&m.ExcludeResourceRules[i].Rule)
	}
}

// ValidatingAdmissionPolicy defaults failurePolicy to Fail and the
// matchConstraints.
func ValidatingAdmissionPolicy(obj *admissionregistrationv1.ValidatingAdmissionPolicy) {
	if obj.Spec.FailurePolicy == nil {
		obj.Spec.FailurePolicy = ptr.To(admissionregistrationv1.Fail)
	}
	matchResourcesDefaults(obj.Spec.MatchConstraints)
}

// MutatingAdmissionPolicy defaults failurePolicy to Fail and the
// matchConstraints; reinvocationPolicy has no default (it is required).
func MutatingAdmissionPolicy(obj *admissionregistrationv1.MutatingAdmissionPolicy) {
	if obj.Spec.FailurePolicy == nil {
		obj.Spec.FailurePolicy = ptr.To(admissionregistrationv1.Fail)
	}
	matchResourcesDefaults(obj.Spec.MatchConstraints)
}

// ValidatingAdmissionPolicyBinding defaults the matchResources, when
// given; a paramRef's parameterNotFoundAction has no default.
func ValidatingAdmissionPolicyBinding(obj *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	matchResourcesDefaults(obj.Spec.MatchResources)
}

// MutatingAdmissionPolicyBinding defaults the matchResources, when given.
func MutatingAdmissionPolicyBinding(obj *admissionregistrationv1.MutatingAdmissionPolicyBinding) {
	matchResourcesDefaults(obj.Spec.MatchResources)
}
