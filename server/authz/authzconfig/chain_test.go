package authzconfig

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	authorizationcel "k8s.io/apiserver/pkg/authorization/cel"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/apiloom/apiloom/server/authz/authzconfig/authzconfigtest"
)

// allowUser stands for RBAC: it allows one user everything.
type allowUser string

func (u allowUser) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.GetUser().GetName() == string(u) {
		return authorizer.DecisionAllow, "rbac allows " + string(u), nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

func (u allowUser) ConditionsAwareAuthorize(ctx context.Context, a authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return authorizer.ConditionsAwareDecisionFromParts(u.Authorize(ctx, a))
}

func (allowUser) EvaluateConditions(context.Context, authorizer.ConditionsAwareDecision, authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, "", authorizer.ErrorConditionEvaluationNotSupported
}

func (u allowUser) RulesFor(_ context.Context, who user.Info, _ string) ([]authorizer.ResourceRuleInfo, []authorizer.NonResourceRuleInfo, bool, error) {
	if who.GetName() != string(u) {
		return nil, nil, false, nil
	}
	return []authorizer.ResourceRuleInfo{&authorizer.DefaultResourceRuleInfo{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}}, nil, false, nil
}

func testBuilder() *Builder {
	return &Builder{RBAC: allowUser("carol"), Backoff: wait.Backoff{Duration: time.Millisecond, Steps: 1}, Compiler: authorizationcel.NewDefaultCompiler()}
}

func attrs(name string, groups ...string) authorizer.AttributesRecord {
	return authorizer.AttributesRecord{User: &user.DefaultInfo{Name: name, Groups: groups}, Verb: "get", APIVersion: "v1",
		Resource: "configmaps", Namespace: "a", Name: "x", ResourceRequest: true}
}

func decide(t *testing.T, a authorizer.Authorizer, attr authorizer.AttributesRecord) (authorizer.Decision, string) {
	t.Helper()
	d, reason, _ := a.Authorize(t.Context(), attr)
	return d, reason
}

func build(t *testing.T, yaml string) authorizer.Authorizer {
	t.Helper()
	c, err := LoadData([]byte(yaml), authorizationcel.NewDefaultCompiler(), nil)
	if err != nil {
		t.Fatal(err)
	}
	a, _, err := testBuilder().Build(c)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// The chain asks its authorizers in order; the first to decide wins, and
// system:masters is allowed before any. AlwaysDeny, as upstream's, has no
// opinion: what nothing allows is refused at the end.
func TestChainOrder(t *testing.T) {
	w := webhookServer(t)
	webhookFirst := build(t, header+webhookYAML("corp", w.Kubeconfig, "")+"- {type: AlwaysAllow, name: alwaysallow}\n")
	allowFirst := build(t, header+"- {type: AlwaysAllow, name: alwaysallow}\n"+webhookYAML("corp", w.Kubeconfig, ""))
	denyFirst := build(t, header+"- {type: AlwaysDeny, name: alwaysdeny}\n- {type: RBAC, name: rbac}\n")
	for _, tc := range []struct {
		name  string
		a     authorizer.Authorizer
		attr  authorizer.AttributesRecord
		wants authorizer.Decision
	}{
		{"webhook denies before AlwaysAllow", webhookFirst, attrs("bob"), authorizer.DecisionDeny},
		{"AlwaysAllow before the webhook", allowFirst, attrs("bob"), authorizer.DecisionAllow},
		{"webhook silent, AlwaysAllow", webhookFirst, attrs("dave"), authorizer.DecisionAllow},
		{"AlwaysDeny has no opinion, RBAC allows", denyFirst, attrs("carol"), authorizer.DecisionAllow},
		{"nobody allows", denyFirst, attrs("dave"), authorizer.DecisionNoOpinion},
		{"system:masters first", webhookFirst, attrs("bob", user.SystemPrivilegedGroup), authorizer.DecisionAllow},
	} {
		if d, _ := decide(t, tc.a, tc.attr); d != tc.wants {
			t.Errorf("%s: decision %v, want %v", tc.name, d, tc.wants)
		}
	}
	if _, _, err := (&Builder{Compiler: authorizationcel.NewDefaultCompiler()}).Build(FromModes([]string{TypeRBAC}, WebhookFlags{})); err != errNoRBAC {
		t.Errorf("RBAC without its authorizer: %v, want %v", err, errNoRBAC)
	}
}

// webhookServer allows alice, denies bob with a reason, and has no
// opinion on anyone else.
func webhookServer(t testing.TB) *authzconfigtest.Webhook {
	return authzconfigtest.Start(t, func(s authorizationv1.SubjectAccessReviewSpec) (bool, bool, string) {
		switch s.User {
		case "alice":
			return true, false, "webhook allows alice"
		case "bob":
			return false, true, "webhook denies bob"
		}
		return false, false, ""
	})
}

// The webhook decides for the users it knows; match conditions keep some
// requests from it, which the next authorizer (RBAC) then decides; a
// webhook that is down decides as its failure policy says.
func TestWebhookMatchConditionsAndFailurePolicy(t *testing.T) {
	w := webhookServer(t)
	// The webhook is not asked about carol: RBAC decides for her.
	cond := "    matchConditions:\n    - expression: request.user != 'carol'\n"
	a := build(t, header+webhookYAML("corp", w.Kubeconfig, cond)+"- {type: RBAC, name: rbac}\n")

	if d, reason := decide(t, a, attrs("alice")); d != authorizer.DecisionAllow || reason != "webhook allows alice" {
		t.Errorf("alice: %v %q", d, reason)
	}
	if d, reason := decide(t, a, attrs("bob")); d != authorizer.DecisionDeny || reason != "webhook denies bob" {
		t.Errorf("bob: %v %q", d, reason)
	}
	calls := w.Calls()
	if d, _ := decide(t, a, attrs("carol")); d != authorizer.DecisionAllow {
		t.Errorf("carol: %v, want RBAC's allow", d)
	}
	if w.Calls() != calls {
		t.Errorf("the webhook was asked about carol, whom its match condition excludes")
	}
	// Cached: alice again costs no call.
	decide(t, a, attrs("alice"))
	if w.Calls() != calls {
		t.Errorf("alice's allow was not cached: %d calls, want %d", w.Calls(), calls)
	}

	w.Stop()
	deny := build(t, header+webhookYAML("corp", w.Kubeconfig, "")+"- {type: RBAC, name: rbac}\n")
	noOpinion := build(t, header+strings.Replace(webhookYAML("corp", w.Kubeconfig, ""), "Deny", "NoOpinion", 1)+"- {type: RBAC, name: rbac}\n")
	if d, _ := decide(t, deny, attrs("carol")); d != authorizer.DecisionDeny {
		t.Errorf("failurePolicy Deny, webhook down: %v, want Deny", d)
	}
	if d, _ := decide(t, noOpinion, attrs("carol")); d != authorizer.DecisionAllow {
		t.Errorf("failurePolicy NoOpinion, webhook down: %v, want RBAC's allow", d)
	}
}

// A changed file swaps the chain; a file that fails keeps it.
func TestReloadable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "authz.yaml")
	write := func(yaml string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(header + "- {type: RBAC, name: rbac}\n")
	c, data, err := LoadFile(file, authorizationcel.NewDefaultCompiler(), nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewReloadable(testBuilder(), c, file, data, time.Minute, "test", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := decide(t, r, attrs("dave")); d != authorizer.DecisionNoOpinion {
		t.Fatalf("dave before the reload: %v", d)
	}
	if r.Check() {
		t.Fatal("reloaded an unchanged file")
	}
	write(header + "- {type: RBAC, name: rbac}\n- {type: AlwaysAllow, name: alwaysallow}\n")
	if !r.Check() {
		t.Fatal("did not reload a changed file")
	}
	if d, _ := decide(t, r, attrs("dave")); d != authorizer.DecisionAllow {
		t.Fatalf("dave after the reload: %v, want AlwaysAllow's allow", d)
	}
	for _, bad := range []string{
		header + "- {type: AlwaysDeny, name: alwaysdeny}\n", // drops RBAC, which the server started with
		header + "- {type: RBAC, name: rbac}\n- {type: Bogus, name: bogus}\n",
		"not: [yaml",
	} {
		write(bad)
		if r.Check() {
			t.Fatalf("reloaded a bad file:\n%s", bad)
		}
		if d, _ := decide(t, r, attrs("dave")); d != authorizer.DecisionAllow {
			t.Fatalf("after a bad file, dave: %v, want the kept chain's allow", d)
		}
	}
}

// SelfSubjectRulesReview reads RBAC's rules through the reloadable
// chain; a webhook adds none and makes the answer incomplete.
func TestRulesThroughTheChain(t *testing.T) {
	w := webhookServer(t)
	c, err := LoadData([]byte(header+"- {type: RBAC, name: rbac}\n"+webhookYAML("corp", w.Kubeconfig, "")), authorizationcel.NewDefaultCompiler(), nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewReloadable(testBuilder(), c, "", nil, time.Minute, "test", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	rules, _, incomplete, _ := r.RulesFor(t.Context(), &user.DefaultInfo{Name: "carol"}, "a")
	if len(rules) != 1 || !incomplete {
		t.Fatalf("carol's rules %v, incomplete %v; want RBAC's one rule, incomplete for the webhook", rules, incomplete)
	}
}

// A webhook with connectionInfo InClusterConfig reaches the service the
// in-cluster configuration names.
func TestWebhookInClusterConfig(t *testing.T) {
	w := webhookServer(t)
	b := testBuilder()
	b.InCluster = func() (*rest.Config, error) { return clientcmd.BuildConfigFromFlags("", w.Kubeconfig) }
	yaml := strings.Replace(webhookYAML("corp", w.Kubeconfig, ""), "{type: KubeConfigFile, kubeConfigFile: "+w.Kubeconfig+"}", "{type: InClusterConfig}", 1)
	c, err := LoadData([]byte(header+yaml), authorizationcel.NewDefaultCompiler(), nil)
	if err != nil {
		t.Fatal(err)
	}
	a, _, err := b.Build(c)
	if err != nil {
		t.Fatal(err)
	}
	if d, reason := decide(t, a, attrs("bob")); d != authorizer.DecisionDeny || reason != "webhook denies bob" || w.Calls() != 1 {
		t.Fatalf("bob: %v %q after %d calls", d, reason, w.Calls())
	}
}
