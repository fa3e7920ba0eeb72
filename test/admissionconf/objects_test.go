package admissionconf

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The objects here spell out every field kube-apiserver would default
// (failurePolicy, matchPolicy, selectors, scope, timeoutSeconds,
// reinvocationPolicy), so that both servers enforce the same
// configuration whatever their defaulting.

// scenarioLabel marks a scenario's namespaces; its policies and webhooks
// select them by it, so that no scenario sees another's writes. A
// Namespace is matched by its own labels, so namespaces/status writes are
// scoped the same way.
const scenarioLabel = "admconf.example.com/scenario"

// arPath is the path of an admissionregistration.k8s.io/v1 collection.
func arPath(resource string) string { return "/apis/admissionregistration.k8s.io/v1/" + resource }

func typeMeta(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: kind}
}

func scenarioSelector(scn string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{scenarioLabel: scn}}
}

// rule matches core/v1 resources (each "resource" or "resource/subresource")
// for ops.
func rule(resources []string, ops ...admissionregistrationv1.OperationType) admissionregistrationv1.RuleWithOperations {
	return admissionregistrationv1.RuleWithOperations{
		Operations: ops,
		Rule: admissionregistrationv1.Rule{
			APIGroups:   []string{""},
			APIVersions: []string{"v1"},
			Resources:   resources,
			Scope:       ptr.To(admissionregistrationv1.AllScopes),
		},
	}
}

// matchIn matches the rules' writes in the scenario's namespaces.
func matchIn(scn string, rules ...admissionregistrationv1.RuleWithOperations) *admissionregistrationv1.MatchResources {
	m := &admissionregistrationv1.MatchResources{
		NamespaceSelector: scenarioSelector(scn),
		ObjectSelector:    &metav1.LabelSelector{},
		MatchPolicy:       ptr.To(admissionregistrationv1.Equivalent),
	}
	for _, r := range rules {
		m.ResourceRules = append(m.ResourceRules, admissionregistrationv1.NamedRuleWithOperations{RuleWithOperations: r})
	}
	return m
}

const (
	create = admissionregistrationv1.Create
	update = admissionregistrationv1.Update
	del    = admissionregistrationv1.Delete
)

func validatingPolicy(name string, spec admissionregistrationv1.ValidatingAdmissionPolicySpec) *admissionregistrationv1.ValidatingAdmissionPolicy {
	if spec.FailurePolicy == nil {
		spec.FailurePolicy = ptr.To(admissionregistrationv1.Fail)
	}
	return &admissionregistrationv1.ValidatingAdmissionPolicy{
		TypeMeta:   typeMeta("ValidatingAdmissionPolicy"),
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       spec,
	}
}

// validatingBinding binds policy (of the same name) with actions and, if
// given, a parameter.
func validatingBinding(name string, actions []admissionregistrationv1.ValidationAction, param *admissionregistrationv1.ParamRef) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   typeMeta("ValidatingAdmissionPolicyBinding"),
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ParamRef:          param,
			ValidationActions: actions,
		},
	}
}

// configMapParams is a policy's paramKind: a ConfigMap.
var configMapParams = &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}

// paramRef names a ConfigMap in the request's namespace.
func paramRef(name string, notFound admissionregistrationv1.ParameterNotFoundActionType) *admissionregistrationv1.ParamRef {
	return &admissionregistrationv1.ParamRef{Name: name, ParameterNotFoundAction: &notFound}
}

func mutatingPolicy(name string, match *admissionregistrationv1.MatchResources, mutations ...admissionregistrationv1.Mutation) *admissionregistrationv1.MutatingAdmissionPolicy {
	return &admissionregistrationv1.MutatingAdmissionPolicy{
		TypeMeta:   typeMeta("MutatingAdmissionPolicy"),
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
			MatchConstraints:   match,
			Mutations:          mutations,
			FailurePolicy:      ptr.To(admissionregistrationv1.Fail),
			ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy,
		},
	}
}

func mutatingBinding(name string) *admissionregistrationv1.MutatingAdmissionPolicyBinding {
	return &admissionregistrationv1.MutatingAdmissionPolicyBinding{
		TypeMeta:   typeMeta("MutatingAdmissionPolicyBinding"),
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: name},
	}
}

// webhook is what a validating and a mutating webhook share.
type webhook struct {
	name, url string
	caPEM     []byte
	rules     []admissionregistrationv1.RuleWithOperations
	scenario  string
	// objectLabels, when set, narrows the webhook to objects so labelled.
	objectLabels    map[string]string
	failurePolicy   admissionregistrationv1.FailurePolicyType
	timeoutSeconds  int32
	matchConditions []admissionregistrationv1.MatchCondition
}

func (w webhook) validating() admissionregistrationv1.ValidatingWebhook {
	return admissionregistrationv1.ValidatingWebhook{
		Name:                    w.name,
		ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: ptr.To(w.url), CABundle: w.caPEM},
		Rules:                   w.rules,
		FailurePolicy:           ptr.To(w.failurePolicy),
		MatchPolicy:             ptr.To(admissionregistrationv1.Equivalent),
		NamespaceSelector:       scenarioSelector(w.scenario),
		ObjectSelector:          &metav1.LabelSelector{MatchLabels: w.objectLabels},
		SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
		TimeoutSeconds:          ptr.To(w.timeoutSeconds),
		AdmissionReviewVersions: []string{"v1"},
		MatchConditions:         w.matchConditions,
	}
}

func (w webhook) mutating() admissionregistrationv1.MutatingWebhook {
	v := w.validating()
	return admissionregistrationv1.MutatingWebhook{
		Name:                    v.Name,
		ClientConfig:            v.ClientConfig,
		Rules:                   v.Rules,
		FailurePolicy:           v.FailurePolicy,
		MatchPolicy:             v.MatchPolicy,
		NamespaceSelector:       v.NamespaceSelector,
		ObjectSelector:          v.ObjectSelector,
		SideEffects:             v.SideEffects,
		TimeoutSeconds:          v.TimeoutSeconds,
		AdmissionReviewVersions: v.AdmissionReviewVersions,
		ReinvocationPolicy:      ptr.To(admissionregistrationv1.NeverReinvocationPolicy),
		MatchConditions:         v.MatchConditions,
	}
}

func validatingWebhooks(name string, hooks ...webhook) *admissionregistrationv1.ValidatingWebhookConfiguration {
	c := &admissionregistrationv1.ValidatingWebhookConfiguration{
		TypeMeta:   typeMeta("ValidatingWebhookConfiguration"),
		ObjectMeta: metav1.ObjectMeta{Name: name},
	}
	for _, h := range hooks {
		c.Webhooks = append(c.Webhooks, h.validating())
	}
	return c
}

func mutatingWebhooks(name string, hooks ...webhook) *admissionregistrationv1.MutatingWebhookConfiguration {
	c := &admissionregistrationv1.MutatingWebhookConfiguration{
		TypeMeta:   typeMeta("MutatingWebhookConfiguration"),
		ObjectMeta: metav1.ObjectMeta{Name: name},
	}
	for _, h := range hooks {
		c.Webhooks = append(c.Webhooks, h.mutating())
	}
	return c
}

// configMap is a ConfigMap named name with data.
func configMap(name string, labels map[string]string, data map[string]string) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "labels": labels},
		"data":     data,
	}
}

// keys is data of n keys k0..kn-1.
func keys(n int) map[string]string {
	d := map[string]string{}
	for i := range n {
		d["k"+string(rune('0'+i))] = "v"
	}
	return d
}
