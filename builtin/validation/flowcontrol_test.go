package validation

import (
	"strings"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	"k8s.io/utils/ptr"
)

func TestFlowControlBootstrapObjectsAreValid(t *testing.T) {
	for _, fs := range append(append([]*flowcontrolv1.FlowSchema{}, bootstrap.MandatoryFlowSchemas...), bootstrap.SuggestedFlowSchemas...) {
		if errs := FlowSchema(fs, nil); len(errs) > 0 {
			t.Errorf("FlowSchema %s: %v", fs.Name, errs)
		}
	}
	for _, pl := range append(append([]*flowcontrolv1.PriorityLevelConfiguration{}, bootstrap.MandatoryPriorityLevelConfigurations...), bootstrap.SuggestedPriorityLevelConfigurations...) {
		if errs := PriorityLevelConfiguration(pl, nil); len(errs) > 0 {
			t.Errorf("PriorityLevelConfiguration %s: %v", pl.Name, errs)
		}
	}
}

func TestFlowSchemaRules(t *testing.T) {
	valid := func() *flowcontrolv1.FlowSchema {
		return &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "mine"}, Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "workload-low"},
			MatchingPrecedence:         500,
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects:      []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: "alice"}}},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}, Namespaces: []string{"*"}}},
			}},
		}}
	}
	if errs := FlowSchema(valid(), nil); len(errs) > 0 {
		t.Fatalf("valid: %v", errs)
	}
	for name, c := range map[string]struct {
		edit func(*flowcontrolv1.FlowSchema)
		want string
	}{
		"precedence 1":    {func(f *flowcontrolv1.FlowSchema) { f.Spec.MatchingPrecedence = 1 }, "only the schema named 'exempt'"},
		"precedence big":  {func(f *flowcontrolv1.FlowSchema) { f.Spec.MatchingPrecedence = 10001 }, "must not be greater than 10000"},
		"no level":        {func(f *flowcontrolv1.FlowSchema) { f.Spec.PriorityLevelConfiguration.Name = "" }, "must reference a priority level"},
		"no subjects":     {func(f *flowcontrolv1.FlowSchema) { f.Spec.Rules[0].Subjects = nil }, "subjects must contain at least one value"},
		"bad verb":        {func(f *flowcontrolv1.FlowSchema) { f.Spec.Rules[0].ResourceRules[0].Verbs = []string{"fly"} }, "Unsupported value"},
		"wildcard and ns": {func(f *flowcontrolv1.FlowSchema) { f.Spec.Rules[0].ResourceRules[0].Namespaces = []string{"*", "a"} }, "if '*' is present"},
		"user and group": {func(f *flowcontrolv1.FlowSchema) {
			f.Spec.Rules[0].Subjects[0].Group = &flowcontrolv1.GroupSubject{Name: "g"}
		}, "group is forbidden"},
		"mandatory change": {func(f *flowcontrolv1.FlowSchema) { f.Name = "catch-all" }, "must equal the fixed value"},
		"url wildcard": {func(f *flowcontrolv1.FlowSchema) {
			f.Spec.Rules[0].NonResourceRules = []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/a*"}}}
		}, "wildcard can only do suffix matching"},
	} {
		f := valid()
		c.edit(f)
		if errs := FlowSchema(f, nil); !strings.Contains(errs.ToAggregate().Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, errs, c.want)
		}
	}
}

func TestPriorityLevelConfigurationRules(t *testing.T) {
	valid := func() *flowcontrolv1.PriorityLevelConfiguration {
		return &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "mine"}, Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
			Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: ptr.To[int32](5),
				LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue,
					Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 64, HandSize: 8, QueueLengthLimit: 50}}},
		}}
	}
	if errs := PriorityLevelConfiguration(valid(), nil); len(errs) > 0 {
		t.Fatalf("valid: %v", errs)
	}
	for name, c := range map[string]struct {
		edit func(*flowcontrolv1.PriorityLevelConfiguration)
		want string
	}{
		"exempt type": {func(p *flowcontrolv1.PriorityLevelConfiguration) {
			p.Spec.Type = flowcontrolv1.PriorityLevelEnablementExempt
		}, "must be 'Exempt' if and only if"},
		"hand > queues": {func(p *flowcontrolv1.PriorityLevelConfiguration) { p.Spec.Limited.LimitResponse.Queuing.HandSize = 65 }, "should not be greater than queues (64)"},
		"entropy": {func(p *flowcontrolv1.PriorityLevelConfiguration) {
			p.Spec.Limited.LimitResponse.Queuing.Queues = 10000000
			p.Spec.Limited.LimitResponse.Queuing.HandSize = 100
		}, "required entropy bits"},
		"lendable":   {func(p *flowcontrolv1.PriorityLevelConfiguration) { p.Spec.Limited.LendablePercent = ptr.To[int32](101) }, "must be between 0 and 100"},
		"no queuing": {func(p *flowcontrolv1.PriorityLevelConfiguration) { p.Spec.Limited.LimitResponse.Queuing = nil }, "must not be empty if limited.limitResponse.type is Limited"},
		"mandatory":  {func(p *flowcontrolv1.PriorityLevelConfiguration) { p.Name = "catch-all" }, "must equal the fixed value"},
	} {
		p := valid()
		c.edit(p)
		if errs := PriorityLevelConfiguration(p, nil); !strings.Contains(errs.ToAggregate().Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, errs, c.want)
		}
	}
	// exempt's spec.exempt is the admin's.
	ex := bootstrap.MandatoryPriorityLevelConfigurationExempt.DeepCopy()
	ex.Spec.Exempt.NominalConcurrencyShares = ptr.To[int32](10)
	if errs := PriorityLevelConfiguration(ex, nil); len(errs) > 0 {
		t.Fatalf("tuned exempt: %v", errs)
	}
}
