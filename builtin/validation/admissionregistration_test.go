package validation

import (
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// hook is a valid validating webhook (as defaulted) to change.
func hook(name string) admissionregistrationv1.ValidatingWebhook {
	return admissionregistrationv1.ValidatingWebhook{
		Name:                    name,
		ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:1/hook")},
		SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
		AdmissionReviewVersions: []string{"v1"},
		TimeoutSeconds:          ptr.To[int32](10),
		Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{"CREATE"},
			Rule: admissionregistrationv1.Rule{APIGroups: []string{"example.com"}, APIVersions: []string{"v1"}, Resources: []string{"widgets"}}}},
	}
}

// rules are valid resource rules of a policy.
func rules(ops ...admissionregistrationv1.OperationType) *admissionregistrationv1.MatchResources {
	return &admissionregistrationv1.MatchResources{
		MatchPolicy:       ptr.To(admissionregistrationv1.Equivalent),
		NamespaceSelector: &metav1.LabelSelector{}, ObjectSelector: &metav1.LabelSelector{},
		ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
			Operations: ops, Rule: admissionregistrationv1.Rule{APIGroups: []string{"example.com"}, APIVersions: []string{"v1"}, Resources: []string{"widgets"}}}}},
	}
}

// vap is a valid policy with validations.
func vap(validations ...admissionregistrationv1.Validation) *admissionregistrationv1.ValidatingAdmissionPolicy {
	return &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: rules("CREATE"), Validations: validations}}
}

func TestAdmissionRegistrationRules(t *testing.T) {
	vwc := func(hooks ...admissionregistrationv1.ValidatingWebhook) *admissionregistrationv1.ValidatingWebhookConfiguration {
		return &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Webhooks: hooks}
	}
	someEffects := hook("a.example.com")
	someEffects.SideEffects = ptr.To(admissionregistrationv1.SideEffectClassSome)
	bad := hook("bad")
	bad.TimeoutSeconds, bad.FailurePolicy, bad.ClientConfig.URL = ptr.To[int32](31), ptr.To[admissionregistrationv1.FailurePolicyType]("Sometimes"), nil
	badRules := hook("r.example.com")
	badRules.Rules[0].Operations = []admissionregistrationv1.OperationType{"*", "CREATE"}
	badRules.Rules[0].Resources = []string{"*", "pods", "pods/*", "pods/status"}
	cond := hook("m.example.com")
	cond.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "a", Expression: "1 +"}, {Name: "a", Expression: "'s'"}, {Name: "p", Expression: "params != null"}}
	vars := vap(admissionregistrationv1.Validation{Expression: "variables.twice > 1"})
	vars.Spec.Variables = []admissionregistrationv1.Variable{{Name: "one", Expression: "1"}, {Name: "twice", Expression: "variables.one * 2"}}
	badVars := vap(admissionregistrationv1.Validation{Expression: "true"})
	badVars.Spec.Variables = []admissionregistrationv1.Variable{{Name: "in", Expression: "1"}, {Name: "x", Expression: "variables.nope"}}
	mp := func(m ...admissionregistrationv1.Mutation) *admissionregistrationv1.MutatingAdmissionPolicy {
		return &admissionregistrationv1.MutatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "m"},
			Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{FailurePolicy: ptr.To(admissionregistrationv1.Fail),
				MatchConstraints: rules("CREATE", "DELETE"), Mutations: m, ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy}}
	}
	for _, tc := range []struct {
		name string
		errs field.ErrorList
		want []string // a substring of each cause, in order; none: valid
	}{
		{"webhook ok", ValidatingWebhookConfiguration(vwc(hook("a.example.com")), nil), nil},
		{"webhook side effects on create", ValidatingWebhookConfiguration(vwc(someEffects), nil),
			[]string{`webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"`}},
		// A stored webhook with side effects lets an update keep them.
		{"webhook side effects kept", ValidatingWebhookConfiguration(vwc(someEffects), vwc(someEffects)), nil},
		{"webhook enums, timeout, client", ValidatingWebhookConfiguration(vwc(bad), nil), []string{
			"webhooks[0].name: Invalid value: \"bad\": should be a domain with at least three segments separated by dots",
			`webhooks[0].failurePolicy: Unsupported value: "Sometimes": supported values: "Fail", "Ignore"`,
			"webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds",
			"webhooks[0].clientConfig: Required value: exactly one of url or service is required"}},
		{"webhook duplicate names", ValidatingWebhookConfiguration(vwc(hook("a.example.com"), hook("a.example.com")), nil),
			[]string{`webhooks[1].name: Duplicate value: "a.example.com"`}},
		{"webhook rules", ValidatingWebhookConfiguration(vwc(badRules), nil), []string{
			`webhooks[0].rules[0].operations: Invalid value: ["*","CREATE"]: if '*' is present, must not specify other operations`,
			`webhooks[0].rules[0].resources[3]: Invalid value: "pods/status": if 'pods/*' is present, must not specify pods/status`,
			`webhooks[0].rules[0].resources: Invalid value: ["*","pods","pods/*","pods/status"]: if '*' is present, must not specify other resources without subresources`}},
		{"webhook match conditions", ValidatingWebhookConfiguration(vwc(cond), nil), []string{
			`webhooks[0].matchConditions[0].expression: Invalid value: "1 +": compilation failed: ERROR: <input>:1:4: Syntax error`,
			`webhooks[0].matchConditions[1].expression: Invalid value: "'s'": must evaluate to bool`,
			`webhooks[0].matchConditions[1].name: Duplicate value: "a"`,
			`webhooks[0].matchConditions[2].expression: Invalid value: "params != null": compilation failed: ERROR: <input>:1:1: undeclared reference to 'params'`}},
		{"static suffix on create", ValidatingWebhookConfiguration(&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "x.static.k8s.io"}}, nil),
			[]string{`metadata.name: Invalid value: "x.static.k8s.io": names ending with ".static.k8s.io" are reserved`}},
		{"policy ok", ValidatingAdmissionPolicy(vap(admissionregistrationv1.Validation{Expression: "object.metadata.name != 'x'", MessageExpression: "'m'"}), nil), nil},
		{"policy without validations", ValidatingAdmissionPolicy(vap(), nil), []string{
			"spec.validations: Required value: validations or auditAnnotations must contain at least one item",
			"spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item"}},
		{"policy expressions", ValidatingAdmissionPolicy(vap(admissionregistrationv1.Validation{Expression: "object", MessageExpression: "1", Message: "a\nb"}), nil), []string{
			`spec.validations[0].expression: Invalid value: "object": must evaluate to bool`,
			`spec.validations[0].messageExpression: Invalid value: "1": must evaluate to string`,
			`spec.validations[0].message: Invalid value: "a\nb": must not contain line breaks`}},
		{"policy variables", ValidatingAdmissionPolicy(vars, nil), nil},
		{"policy bad variables", ValidatingAdmissionPolicy(badVars, nil), []string{
			`spec.variables[0].name: Invalid value: "in": must be a valid CEL identifier`,
			`spec.variables[1].expression: Invalid value: "variables.nope": compilation failed`}},
		{"binding required last", ValidatingAdmissionPolicyBinding(&admissionregistrationv1.ValidatingAdmissionPolicyBinding{
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{ParamRef: &admissionregistrationv1.ParamRef{}}}, nil), []string{
			"spec.paramRef: Required value: one of name or selector must be specified",
			"spec.paramRef.parameterNotFoundAction: Required value",
			"spec.policyName: Required value",
			"spec.validationActions: Required value"}},
		{"binding actions", ValidatingAdmissionPolicyBinding(&admissionregistrationv1.ValidatingAdmissionPolicyBinding{
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p", ValidationActions: []admissionregistrationv1.ValidationAction{"Deny", "Warn", "Deny"}}}, nil), []string{
			`spec.validationActions[2]: Duplicate value: "Deny"`,
			`spec.validationActions: Invalid value: ["Deny","Warn","Deny"]: must not contain both Deny and Warn`}},
		{"mutating policy", MutatingAdmissionPolicy(mp(
			admissionregistrationv1.Mutation{PatchType: "JSONPatch", JSONPatch: &admissionregistrationv1.JSONPatch{Expression: "[JSONPatch{op: 'add', path: '/x', value: 1}]"}},
			admissionregistrationv1.Mutation{PatchType: "ApplyConfiguration", ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{Expression: "'x'"}},
			admissionregistrationv1.Mutation{PatchType: "Merge"}), nil), []string{
			`spec.matchConstraints.resourceRules.operations: Unsupported value: "DELETE": supported values: "*", "CONNECT", "CREATE", "UPDATE"`,
			`spec.mutations[1].applyConfiguration.expression: Invalid value: "'x'": must evaluate to Object`,
			`spec.mutations[2].patchType: Unsupported value: "Merge": supported values: "ApplyConfiguration", "JSONPatch"`}},
		{"policy status", ValidatingAdmissionPolicyStatus(&admissionregistrationv1.ValidatingAdmissionPolicy{Status: admissionregistrationv1.ValidatingAdmissionPolicyStatus{
			TypeChecking: &admissionregistrationv1.TypeChecking{ExpressionWarnings: []admissionregistrationv1.ExpressionWarning{{FieldRef: "spec[["}}}}}, nil), []string{
			"status.typeChecking.expressionWarnings[0].warning: Required value",
			`status.typeChecking.expressionWarnings[0].fieldRef: Invalid value: "spec[[": invalid JSONPath`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := causes(tc.errs)
			if len(tc.errs) != len(tc.want) {
				t.Fatalf("%d causes, want %d:\n%s", len(tc.errs), len(tc.want), got)
			}
			for i, w := range tc.want {
				if !strings.Contains(tc.errs[i].Error(), w) {
					t.Errorf("cause %d is %q, want one with %q", i, tc.errs[i].Error(), w)
				}
			}
		})
	}
}

// TestStoredMatchConditionsAreNotRecompiled: an update that keeps a
// webhook's match conditions is not refused for them, as upstream skips
// them (an expression valid once stays storable); a changed one is
// compiled again.
func TestStoredMatchConditionsAreNotRecompiled(t *testing.T) {
	h := hook("m.example.com")
	h.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "a", Expression: "1 +"}}
	old := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Webhooks: []admissionregistrationv1.ValidatingWebhook{h}}
	obj := old.DeepCopy()
	obj.Labels = map[string]string{"l": "1"}
	if errs := ValidatingWebhookConfiguration(obj, old); len(errs) != 0 {
		t.Fatalf("unchanged match conditions refused: %v", errs)
	}
	obj.Webhooks[0].MatchConditions[0].Name = "b"
	if errs := ValidatingWebhookConfiguration(obj, old); len(errs) != 1 {
		t.Fatalf("changed match conditions: %v, want one cause", errs)
	}
}
