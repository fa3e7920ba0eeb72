package rbacescalation

import (
	"context"
	"errors"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericrequest "k8s.io/apiserver/pkg/endpoints/request"
)

// fakeResolver holds fixed rules per namespace, roles by name, and the
// verb/resource pairs it allows.
type fakeResolver struct {
	rules   map[string][]rbacv1.PolicyRule // by namespace
	roles   map[string][]rbacv1.PolicyRule // by Kind/name
	allow   map[string]bool                // verb/resource/name
	rulesOf []string                       // the namespaces RulesFor was asked
}

func (f *fakeResolver) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	return authorizer.AuthorizerFunc(f.decide).Authorize(ctx, a)
}

func (f *fakeResolver) ConditionsAwareAuthorize(ctx context.Context, a authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return authorizer.AuthorizerFunc(f.decide).ConditionsAwareAuthorize(ctx, a)
}

func (f *fakeResolver) EvaluateConditions(ctx context.Context, d authorizer.ConditionsAwareDecision, data authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return authorizer.AuthorizerFunc(f.decide).EvaluateConditions(ctx, d, data)
}

// decide allows the verb/resource/name triples in allow.
func (f *fakeResolver) decide(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if f.allow[a.GetVerb()+"/"+a.GetResource()+"/"+a.GetName()] {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

func (f *fakeResolver) RulesFor(_ context.Context, _ user.Info, ns string) ([]rbacv1.PolicyRule, error) {
	f.rulesOf = append(f.rulesOf, ns)
	return f.rules[ns], nil
}

func (f *fakeResolver) GetRoleReferenceRules(_ context.Context, ref rbacv1.RoleRef, _ string) ([]rbacv1.PolicyRule, error) {
	rules, ok := f.roles[ref.Kind+"/"+ref.Name]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: rbacv1.GroupName, Resource: "clusterroles"}, ref.Name)
	}
	return rules, nil
}

func rule(group, res string, verbs ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{res}, Verbs: verbs}
}

func as(name string, groups ...string) context.Context {
	return genericrequest.WithUser(context.Background(), &user.DefaultInfo{Name: name, Groups: groups})
}

// TestRoleEscalation: a user holding a subset of a Role's rules is
// refused with upstream's exact 403; holding all, allowed "escalate", or
// in system:masters, it may write it.
func TestRoleEscalation(t *testing.T) {
	r := &fakeResolver{rules: map[string][]rbacv1.PolicyRule{"team": {rule("", "configmaps", "get")}}}
	c := For(Roles, r)
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "team"},
		Rules: []rbacv1.PolicyRule{rule("", "configmaps", "get", "list"), rule("", "secrets", "get", "list")}}

	err := c.Admit(as("alice", "system:authenticated"), role, nil)
	want := `roles.rbac.authorization.k8s.io "x" is forbidden: user "alice" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:
{APIGroups:[""], Resources:["configmaps"], Verbs:["list"]}
{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("subset: %v\nwant 403 %s", err, want)
	}
	if len(r.rulesOf) != 1 || r.rulesOf[0] != "team" {
		t.Errorf("rules resolved in %q, want the role's namespace", r.rulesOf)
	}
	// An update that changes only what the garbage collector writes is
	// never checked.
	gc := role.DeepCopy()
	gc.Finalizers = []string{"x"}
	if err := c.Admit(as("alice"), gc, role); err != nil {
		t.Errorf("finalizer-only update: %v", err)
	}

	r.rules["team"] = append(r.rules["team"], rule("", "*", "*"))
	if err := c.Admit(as("alice"), role, nil); err != nil {
		t.Errorf("holding all: %v", err)
	}
	r.rules["team"] = nil
	r.allow = map[string]bool{"escalate/roles/": true}
	if err := c.Admit(as("alice"), role, nil); err != nil {
		t.Errorf("allowed escalate: %v", err)
	}
	// On update, escalate is asked on the role's name.
	if err := c.Admit(as("alice"), role, &rbacv1.Role{}); !apierrors.IsForbidden(err) {
		t.Errorf("update with escalate on no name only: %v", err)
	}
	r.allow["escalate/roles/x"] = true
	if err := c.Admit(as("alice"), role, &rbacv1.Role{}); err != nil {
		t.Errorf("update allowed escalate on x: %v", err)
	}
	r.allow = nil
	if err := c.Admit(as("system:apiserver", user.SystemPrivilegedGroup), role, nil); err != nil {
		t.Errorf("system:masters: %v", err)
	}
	if err := c.Admit(context.Background(), role, nil); !apierrors.IsForbidden(err) ||
		err.Error() != `roles.rbac.authorization.k8s.io "x" is forbidden: no user on context` {
		t.Errorf("no user: %v", err)
	}
}

// TestClusterRoleAggregation: an aggregationRule needs every permission,
// rules alone only those they grant.
func TestClusterRoleAggregation(t *testing.T) {
	r := &fakeResolver{rules: map[string][]rbacv1.PolicyRule{"": {rule("", "configmaps", "*")}}}
	c := For(ClusterRoles, r)
	cr := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "agg"}, Rules: []rbacv1.PolicyRule{rule("", "configmaps", "get")},
		AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"a": "b"}}}}}
	err := c.Admit(as("bob"), cr, nil)
	if !apierrors.IsForbidden(err) || err.Error() != `clusterroles.rbac.authorization.k8s.io "agg" is forbidden: must have cluster-admin privileges to use the aggregationRule` {
		t.Fatalf("aggregation: %v", err)
	}
	plain := cr.DeepCopy()
	plain.AggregationRule = nil
	if err := c.Admit(as("bob"), plain, nil); err != nil {
		t.Errorf("plain: %v", err)
	}
	// Removing an aggregationRule needs it too.
	if err := c.Admit(as("bob"), plain, cr); !apierrors.IsForbidden(err) {
		t.Errorf("removing aggregation: %v", err)
	}
	r.rules[""] = fullAuthority
	if err := c.Admit(as("bob"), cr, nil); err != nil {
		t.Errorf("cluster admin: %v", err)
	}
}

// TestBindingEscalation: a binding is allowed with "bind" on its role or
// holding all the role's rules; else 403, and a missing role is the
// resolver's 404.
func TestBindingEscalation(t *testing.T) {
	r := &fakeResolver{
		rules: map[string][]rbacv1.PolicyRule{"team": {rule("", "configmaps", "get")}},
		roles: map[string][]rbacv1.PolicyRule{"ClusterRole/edit": {rule("apps", "deployments", "create")}, "Role/reader": {rule("", "configmaps", "get")}},
	}
	c := For(RoleBindings, r)
	b := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "team"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"}}
	err := c.Admit(as("carol", "devs"), b, nil)
	want := `rolebindings.rbac.authorization.k8s.io "b" is forbidden: user "carol" (groups=["devs"]) is attempting to grant RBAC permissions not currently held:
{APIGroups:["apps"], Resources:["deployments"], Verbs:["create"]}`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("binding edit: %v\nwant %s", err, want)
	}
	r.allow = map[string]bool{"bind/clusterroles/edit": true}
	if err := c.Admit(as("carol"), b, nil); err != nil {
		t.Errorf("allowed bind: %v", err)
	}
	r.allow = nil
	held := b.DeepCopy()
	held.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "reader"}
	if err := c.Admit(as("carol"), held, nil); err != nil {
		t.Errorf("holding the role's rules: %v", err)
	}
	gone := b.DeepCopy()
	gone.RoleRef.Name = "nope"
	if err := c.Admit(as("carol"), gone, nil); !apierrors.IsNotFound(err) {
		t.Errorf("missing role: %v", err)
	}
	if For(schema.GroupResource{Resource: "configmaps"}, r) != nil {
		t.Error("a check for configmaps")
	}
	var status apierrors.APIStatus
	if !errors.As(c.Admit(as("carol"), b, nil), &status) || status.Status().Code != 403 {
		t.Error("not an APIStatus 403")
	}
}
