package strategy

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestAdmissionRegistrationDefaults: the fields upstream defaults get their
// defaults where unset, in webhooks, their service references and rules,
// and in policies' and bindings' match resources; what is set stays, and
// a policy's reinvocationPolicy and a paramRef's action get none.
func TestAdmissionRegistrationDefaults(t *testing.T) {
	rule := admissionregistrationv1.RuleWithOperations{Rule: admissionregistrationv1.Rule{Resources: []string{"widgets"}}}
	v := &admissionregistrationv1.ValidatingWebhookConfiguration{Webhooks: []admissionregistrationv1.ValidatingWebhook{
		{ClientConfig: admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Name: "s"}}, Rules: []admissionregistrationv1.RuleWithOperations{rule}},
		{FailurePolicy: ptr.To(admissionregistrationv1.Ignore), TimeoutSeconds: ptr.To[int32](3), ClientConfig: admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Port: ptr.To[int32](8443)}}},
	}}
	ValidatingWebhookConfiguration(v)
	w := v.Webhooks[0]
	if *w.FailurePolicy != admissionregistrationv1.Fail || *w.MatchPolicy != admissionregistrationv1.Equivalent || *w.TimeoutSeconds != 10 ||
		w.NamespaceSelector == nil || w.ObjectSelector == nil || *w.ClientConfig.Service.Port != 443 || *w.Rules[0].Scope != admissionregistrationv1.AllScopes {
		t.Fatalf("defaulted webhook %+v", w)
	}
	if w := v.Webhooks[1]; *w.FailurePolicy != admissionregistrationv1.Ignore || *w.TimeoutSeconds != 3 || *w.ClientConfig.Service.Port != 8443 {
		t.Fatalf("set fields changed: %+v", w)
	}
	m := &admissionregistrationv1.MutatingWebhookConfiguration{Webhooks: []admissionregistrationv1.MutatingWebhook{{}}}
	MutatingWebhookConfiguration(m)
	if *m.Webhooks[0].ReinvocationPolicy != admissionregistrationv1.NeverReinvocationPolicy || *m.Webhooks[0].TimeoutSeconds != 10 {
		t.Fatalf("defaulted mutating webhook %+v", m.Webhooks[0])
	}

	p := &admissionregistrationv1.MutatingAdmissionPolicy{Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
		MatchConstraints: &admissionregistrationv1.MatchResources{ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
			ExcludeResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: rule}}}}}
	MutatingAdmissionPolicy(p)
	mc := p.Spec.MatchConstraints
	if *p.Spec.FailurePolicy != admissionregistrationv1.Fail || p.Spec.ReinvocationPolicy != "" || *mc.MatchPolicy != admissionregistrationv1.Equivalent ||
		mc.NamespaceSelector == nil || mc.ObjectSelector.MatchLabels["a"] != "b" || *mc.ExcludeResourceRules[0].Scope != admissionregistrationv1.AllScopes {
		t.Fatalf("defaulted policy %+v", p.Spec)
	}
	vp := &admissionregistrationv1.ValidatingAdmissionPolicy{}
	ValidatingAdmissionPolicy(vp)
	if *vp.Spec.FailurePolicy != admissionregistrationv1.Fail || vp.Spec.MatchConstraints != nil {
		t.Fatalf("defaulted policy without matchConstraints %+v", vp.Spec)
	}
	b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
		ParamRef: &admissionregistrationv1.ParamRef{Name: "x"}, MatchResources: &admissionregistrationv1.MatchResources{}}}
	ValidatingAdmissionPolicyBinding(b)
	if b.Spec.ParamRef.ParameterNotFoundAction != nil || *b.Spec.MatchResources.MatchPolicy != admissionregistrationv1.Equivalent {
		t.Fatalf("defaulted binding %+v", b.Spec)
	}
	mb := &admissionregistrationv1.MutatingAdmissionPolicyBinding{}
	MutatingAdmissionPolicyBinding(mb)
	if mb.Spec.MatchResources != nil {
		t.Fatalf("binding without matchResources got %+v", mb.Spec.MatchResources)
	}
}
