package rbac

import (
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// policy is a small cluster's RBAC objects, used by several tests.
func policy() []runtime.Object {
	return []runtime.Object{
		role("team", "pod-reader", resourceRule(l("get", "list"), l(""), l("pods", "pods/log"))),
		role("team", "one-secret", resourceRule(l("get"), l(""), l("secrets"), "token")),
		clusterRole("deployer", resourceRule(l("*"), l("apps"), l("deployments", "*/scale"))),
		clusterRole("metrics", urlRule(l("get"), l("/metrics", "/debug/*"))),
		roleBinding("team", "readers", "Role", "pod-reader", userSubject("alice"), groupSubject("auditors")),
		roleBinding("team", "secret", "Role", "one-secret", saSubject("", "robot")),
		roleBinding("team", "deployers", "ClusterRole", "deployer", userSubject("bob")),
		roleBinding("team", "dangling", "Role", "gone", userSubject("carol")),
		clusterRoleBinding("metrics", "metrics", groupSubject("monitoring"), userSubject("alice")),
		clusterRoleBinding("dangling", "vanished", userSubject("carol"), groupSubject("ghosts")),
		clusterRoleBinding("sa-deployer", "deployer", saSubject("ci", "builder"), saSubject("", "nobody")),
	}
}

// TestAuthorize: who may do what under policy, with kube-apiserver's
// reasons, for users, groups and service accounts, Roles and ClusterRoles
// bound in a namespace and cluster-wide, and bindings to missing roles.
func TestAuthorize(t *testing.T) {
	s := newMemSources()
	s.add(t, policy()...)
	a := runAuthorizer(t, s)

	alice, bob, carol := person("alice"), person("bob"), person("carol", "ghosts")
	auditor, monitor := person("dora", "auditors"), person("erin", "monitoring")
	robot, builder := person("system:serviceaccount:team:robot"), person("system:serviceaccount:ci:builder")
	nobody := person("system:serviceaccount::nobody")

	const none = ""
	cases := []struct {
		name   string
		req    authorizer.AttributesRecord
		allow  bool
		reason string
	}{
		{"role by user", request(alice, "list", "team", "", "pods", "", ""), true,
			`RBAC: allowed by RoleBinding "readers/team" of Role "pod-reader" to User "alice"`},
		{"role by group", request(auditor, "get", "team", "", "pods", "log", "p"), true,
			`RBAC: allowed by RoleBinding "readers/team" of Role "pod-reader" to Group "auditors"`},
		{"role not elsewhere", request(alice, "list", "other", "", "pods", "", ""), false, none},
		{"role not cluster-wide", request(alice, "list", "", "", "pods", "", ""), false, none},
		{"role verb", request(alice, "delete", "team", "", "pods", "", "p"), false, none},
		{"service account, binding's namespace", request(robot, "get", "team", "", "secrets", "", "token"), true,
			`RBAC: allowed by RoleBinding "secret/team" of Role "one-secret" to ServiceAccount "robot/team"`},
		{"service account, other name", request(robot, "get", "team", "", "secrets", "", "other"), false, none},
		{"clusterrole in a namespace", request(bob, "patch", "team", "apps", "deployments", "", "d"), true,
			`RBAC: allowed by RoleBinding "deployers/team" of ClusterRole "deployer" to User "bob"`},
		{"clusterrole */sub", request(bob, "update", "team", "apps", "replicasets", "scale", "d"), true,
			`RBAC: allowed by RoleBinding "deployers/team" of ClusterRole "deployer" to User "bob"`},
		{"clusterrole in a namespace only", request(bob, "patch", "other", "apps", "deployments", "", "d"), false, none},
		{"cluster binding, service account", request(builder, "create", "anywhere", "apps", "deployments", "", ""), true,
			`RBAC: allowed by ClusterRoleBinding "sa-deployer" of ClusterRole "deployer" to ServiceAccount "builder/ci"`},
		{"cluster binding, service account without namespace", request(nobody, "create", "x", "apps", "deployments", "", ""), false, none},
		{"url by group", urlRequest(monitor, "get", "/debug/pprof/heap"), true,
			`RBAC: allowed by ClusterRoleBinding "metrics" of ClusterRole "metrics" to Group "monitoring"`},
		{"url by user, second subject", urlRequest(alice, "get", "/metrics"), true,
			`RBAC: allowed by ClusterRoleBinding "metrics" of ClusterRole "metrics" to User "alice"`},
		{"url verb", urlRequest(alice, "post", "/metrics"), false, none},
		{"missing role and clusterrole", request(carol, "get", "team", "", "pods", "", "p"), false,
			`RBAC: [clusterrole.rbac.authorization.k8s.io "vanished" not found, role.rbac.authorization.k8s.io "gone" not found]`},
		{"missing clusterrole only, cluster-wide", urlRequest(carol, "get", "/metrics"), false,
			`RBAC: clusterrole.rbac.authorization.k8s.io "vanished" not found`},
		{"missing clusterrole named twice", urlRequest(person("carol", "ghosts"), "get", "/metrics"), false,
			`RBAC: clusterrole.rbac.authorization.k8s.io "vanished" not found`},
		{"stranger", request(person("zed", "system:authenticated"), "get", "team", "", "pods", "", "p"), false, none},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, reason, err := a.Authorize(t.Context(), c.req)
			if err != nil {
				t.Fatal(err)
			}
			want := authorizer.DecisionNoOpinion
			if c.allow {
				want = authorizer.DecisionAllow
			}
			if d != want || reason != c.reason {
				t.Fatalf("Authorize = %v, %q\nwant        %v, %q", d, reason, want, c.reason)
			}
		})
	}
}

// TestRulesFor: the rules of every binding of the user, cluster-wide ones
// first, each binding's once even when it names the user twice; the
// missing roles as the error; and RuleResolver's split into resource and
// non-resource rules.
func TestRulesFor(t *testing.T) {
	s := newMemSources()
	s.add(t, policy()...)
	s.add(t, roleBinding("team", "twice", "Role", "one-secret", userSubject("alice"), groupSubject("auditors")))
	a := runAuthorizer(t, s)
	alice := person("alice", "auditors")

	rules, err := a.Resolver().RulesFor(t.Context(), alice, "team")
	if err != nil {
		t.Fatal(err)
	}
	want := []rbacv1.PolicyRule{
		urlRule(l("get"), l("/metrics", "/debug/*")),
		resourceRule(l("get", "list"), l(""), l("pods", "pods/log")),
		resourceRule(l("get"), l(""), l("secrets"), "token"),
	}
	if !equalRules(rules, want) {
		t.Fatalf("RulesFor(alice, team) = %v\nwant %v", rules, want)
	}

	res, nonRes, incomplete, err := a.RulesFor(t.Context(), alice, "team")
	if err != nil || incomplete || len(res) != 2 || len(nonRes) != 1 ||
		!slices.Equal(nonRes[0].GetNonResourceURLs(), l("/metrics", "/debug/*")) ||
		!slices.Equal(res[1].GetResourceNames(), l("token")) {
		t.Fatalf("RuleResolver.RulesFor = %v %v %v %v", res, nonRes, incomplete, err)
	}

	rules, err = a.Resolver().RulesFor(t.Context(), person("carol", "ghosts"), "team")
	if len(rules) != 0 || err == nil || err.Error() !=
		`[clusterrole.rbac.authorization.k8s.io "vanished" not found, role.rbac.authorization.k8s.io "gone" not found]` {
		t.Fatalf("RulesFor(carol) = %v, %v", rules, err)
	}

	got, err := a.Resolver().GetRoleReferenceRules(t.Context(), rbacv1.RoleRef{Kind: "Role", Name: "pod-reader"}, "team")
	if err != nil || len(got) != 1 {
		t.Fatalf("GetRoleReferenceRules(Role pod-reader) = %v, %v", got, err)
	}
	if _, err := a.Resolver().GetRoleReferenceRules(t.Context(), rbacv1.RoleRef{Kind: "Role", Name: "pod-reader"}, "other"); err == nil ||
		err.Error() != `role.rbac.authorization.k8s.io "pod-reader" not found` {
		t.Fatalf("GetRoleReferenceRules(Role pod-reader in other) = %v", err)
	}
	if _, err := a.Resolver().GetRoleReferenceRules(t.Context(), rbacv1.RoleRef{Kind: "Group", Name: "x"}, ""); err == nil ||
		err.Error() != `unsupported role reference kind: "Group"` {
		t.Fatalf("GetRoleReferenceRules(Group) = %v", err)
	}
}

func equalRules(a, b []rbacv1.PolicyRule) bool {
	return slices.EqualFunc(a, b, func(x, y rbacv1.PolicyRule) bool { return x.String() == y.String() })
}
