package rbac

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// benchPolicy is 500 Roles in 50 namespaces, 500 ClusterRoles of 5 rules
// each, and 1,000 bindings: 700 RoleBindings (to Roles and to
// ClusterRoles) and 300 ClusterRoleBindings, each naming two users and a
// group out of 2,000 users and 100 groups; plus, as kube-apiserver's
// bootstrap policy has, a few ClusterRoleBindings to
// system:authenticated.
func benchPolicy() []runtime.Object {
	var objs []runtime.Object
	resources := []string{"pods", "services", "configmaps", "secrets", "deployments", "jobs"}
	for i := range 500 {
		ns := fmt.Sprintf("ns-%d", i%50)
		objs = append(objs, role(ns, fmt.Sprintf("role-%d", i),
			resourceRule(l("get", "list"), l(""), l(resources[i%6], resources[(i+1)%6])),
			resourceRule(l("update"), l("apps"), l("deployments/scale")),
			resourceRule(l("get"), l(""), l("secrets"), fmt.Sprintf("s-%d", i)),
			resourceRule(l("create", "delete"), l("batch"), l("jobs")),
			resourceRule(l("watch"), l(""), l(resources[(i+2)%6]))))
		objs = append(objs, clusterRole(fmt.Sprintf("cr-%d", i),
			resourceRule(l("get", "list", "watch"), l("example.com"), l(fmt.Sprintf("widgets%d", i))),
			resourceRule(l("patch"), l("*"), l("*/status")),
			resourceRule(l("get"), l(""), l("nodes"), fmt.Sprintf("node-%d", i)),
			resourceRule(l("delete"), l(""), l(resources[i%6])),
			urlRule(l("get"), l(fmt.Sprintf("/custom/%d/*", i)))))
	}
	for i := range 700 {
		ns := fmt.Sprintf("ns-%d", i%50)
		kind, ref := "Role", fmt.Sprintf("role-%d", (i/50*50+i%50)%500)
		if i%3 == 0 {
			kind, ref = "ClusterRole", fmt.Sprintf("cr-%d", i%500)
		}
		objs = append(objs, roleBinding(ns, fmt.Sprintf("rb-%d", i), kind, ref,
			userSubject(fmt.Sprintf("user-%d", i)), userSubject(fmt.Sprintf("user-%d", i+1000)), groupSubject(fmt.Sprintf("group-%d", i%100))))
	}
	for i := range 300 {
		objs = append(objs, clusterRoleBinding(fmt.Sprintf("crb-%d", i), fmt.Sprintf("cr-%d", i),
			userSubject(fmt.Sprintf("user-%d", i+700)), userSubject(fmt.Sprintf("user-%d", i+1700)), groupSubject(fmt.Sprintf("group-%d", (i*7)%100))))
	}
	objs = append(objs,
		clusterRole("discovery", urlRule(l("get"), l("/api", "/api/*", "/apis", "/apis/*", "/version", "/healthz"))),
		clusterRole("basic-user", resourceRule(l("create"), l("authorization.k8s.io"), l("selfsubjectaccessreviews", "selfsubjectrulesreviews"))),
		clusterRoleBinding("discovery", "discovery", groupSubject("system:authenticated")),
		clusterRoleBinding("basic-user", "basic-user", groupSubject("system:authenticated")))
	return objs
}

// BenchmarkAuthorize: the cost of one decision under benchPolicy, for
// requests a RoleBinding allows (through a Role, and through a group), a
// ClusterRoleBinding allows, and requests denied after every binding of
// the user and its groups has been tried.
func BenchmarkAuthorize(b *testing.B) {
	s := newMemSources()
	s.add(b, benchPolicy()...)
	a := runAuthorizer(b, s)
	user := person("user-7", "group-7", "group-3", "system:authenticated")
	cases := []struct {
		name  string
		req   authorizer.AttributesRecord
		allow bool
	}{
		// rb-7 binds role-7 (ns-7) to user-7: get/list services, configmaps.
		{"allowed/rolebinding", request(user, "list", "ns-7", "", "services", "", ""), true},
		// rb-207 binds cr-207 to group-7 in ns-7: delete secrets, found
		// after the user's own and two other bindings of the group.
		{"allowed/group", request(user, "delete", "ns-7", "", "secrets", "", "s"), true},
		{"allowed/clusterrolebinding", request(person("user-750", "system:authenticated"), "patch", "ns-1", "apps", "deployments", "status", "d"), true},
		{"allowed/nonresource", urlRequest(user, "get", "/apis/apps/v1"), true},
		{"denied/resource", request(user, "delete", "ns-7", "", "nodes", "", "n"), false},
		{"denied/nonresource", urlRequest(user, "get", "/metrics"), false},
		{"denied/stranger", request(person("nobody", "system:authenticated"), "get", "ns-7", "", "pods", "", "p"), false},
	}
	for _, c := range cases {
		d, _, _ := a.Authorize(b.Context(), c.req)
		if (d == authorizer.DecisionAllow) != c.allow {
			b.Fatalf("%s: decision %v", c.name, d)
		}
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				a.Authorize(b.Context(), c.req)
			}
		})
	}
}
