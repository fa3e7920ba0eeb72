package rbac

import (
	"fmt"
	"math/rand/v2"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// The differential test's world (peer_test.go): seeded random RBAC
// objects that kube-apiserver accepts, and requests aimed at them. The
// pools are small so that rules and requests collide often, and hold every
// special form: "*" verbs, groups and resources, "res/sub" and "*/sub",
// resourceNames, nonResourceURLs exact and with a trailing "*", users,
// groups and service accounts (with and without a namespace in
// RoleBindings), and bindings to roles that do not exist.
var (
	genNamespaces = []string{"ns-a", "ns-b", "ns-c"}
	genUsers      = []string{"u0", "u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8", "u9"}
	genGroups     = []string{"g0", "g1", "g2", "g3", "g4", "g5", "g6", "g7", "system:authenticated"}
	genSAs        = []string{"sa0", "sa1"}
	genVerbs      = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection", "bind", "escalate"}
	genAPIGroups  = []string{"", "apps", "batch", "example.com"}
	genResources  = []string{"pods", "deployments", "secrets", "configmaps", "widgets", "jobs", "nodes"}
	genSubs       = []string{"log", "status", "scale"}
	genNames      = []string{"n0", "n1", "n2"}
	genURLs       = []string{"/metrics", "/healthz", "/healthz/*", "/api", "/api/*", "/apis", "/apis/apps/*", "/debug/*", "/custom/x", "*"}
	genPaths      = []string{"/metrics", "/healthz", "/healthz/etcd", "/api", "/api/v1", "/apis", "/apis/apps/v1", "/debug/pprof/heap", "/custom/x", "/custom/y", "/version"}
	genURLVerbs   = []string{"get", "post", "put", "delete", "head"}
)

type generator struct{ r *rand.Rand }

func newGenerator(seed uint64) *generator {
	return &generator{rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

func (g *generator) pick(pool []string) string { return pool[g.r.IntN(len(pool))] }

// some picks 1..max distinct items of pool, with "*" (when star) now and then.
func (g *generator) some(pool []string, max int, star bool) []string {
	if star && g.r.IntN(8) == 0 {
		return []string{"*"}
	}
	n := 1 + g.r.IntN(max)
	var out []string
	for range n {
		if v := g.pick(pool); !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

func (g *generator) resources() []string {
	if g.r.IntN(10) == 0 {
		return []string{"*"}
	}
	var out []string
	for range 1 + g.r.IntN(3) {
		var res string
		switch g.r.IntN(6) {
		case 0:
			res = g.pick(genResources) + "/" + g.pick(genSubs)
		case 1:
			res = "*/" + g.pick(genSubs)
		default:
			res = g.pick(genResources)
		}
		if !slices.Contains(out, res) {
			out = append(out, res)
		}
	}
	return out
}

func (g *generator) resourceRule() rbacv1.PolicyRule {
	r := rbacv1.PolicyRule{Verbs: g.some(genVerbs, 3, true), APIGroups: g.some(genAPIGroups, 2, true), Resources: g.resources()}
	if g.r.IntN(4) == 0 {
		r.ResourceNames = g.some(genNames, 2, false)
	}
	return r
}

func (g *generator) rules(cluster bool) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for range 1 + g.r.IntN(3) {
		if cluster && g.r.IntN(4) == 0 {
			out = append(out, rbacv1.PolicyRule{Verbs: g.some(genURLVerbs, 2, true), NonResourceURLs: g.some(genURLs, 2, false)})
		} else {
			out = append(out, g.resourceRule())
		}
	}
	return out
}

func (g *generator) subjects(namespaced bool) []rbacv1.Subject {
	var out []rbacv1.Subject
	for range 1 + g.r.IntN(3) {
		switch g.r.IntN(5) {
		case 0, 1:
			out = append(out, userSubject(g.pick(genUsers)))
		case 2, 3:
			out = append(out, groupSubject(g.pick(genGroups[:len(genGroups)-1])))
		default:
			ns := g.pick(genNamespaces)
			if namespaced && g.r.IntN(2) == 0 {
				ns = ""
			}
			out = append(out, saSubject(ns, g.pick(genSAs)))
		}
	}
	return out
}

// policy generates nRoles Roles and ClusterRoles, nBindings RoleBindings
// and a third as many ClusterRoleBindings (each grants everywhere); about
// one binding in twenty refers to a role that does not exist, and more
// RoleBindings to a Role that exists in another namespace only.
func (g *generator) policy(nRoles, nBindings int) []runtime.Object {
	var objs []runtime.Object
	for i := range nRoles {
		objs = append(objs, role(g.pick(genNamespaces), fmt.Sprintf("role-%d", i%(nRoles/2)), g.rules(false)...))
		objs = append(objs, clusterRole(fmt.Sprintf("diff-cr-%d", i), g.rules(true)...))
	}
	ref := func(prefix string, n int) string {
		if g.r.IntN(20) == 0 {
			return prefix + "missing-" + g.pick(genNames)
		}
		return fmt.Sprintf("%s%d", prefix, g.r.IntN(n))
	}
	for i := range nBindings {
		ns := g.pick(genNamespaces)
		if g.r.IntN(2) == 0 {
			objs = append(objs, roleBinding(ns, fmt.Sprintf("rb-%d", i), "Role", ref("role-", nRoles/2), g.subjects(true)...))
		} else {
			objs = append(objs, roleBinding(ns, fmt.Sprintf("rb-%d", i), "ClusterRole", ref("diff-cr-", nRoles), g.subjects(true)...))
		}
		if i%3 == 0 {
			objs = append(objs, clusterRoleBinding(fmt.Sprintf("diff-crb-%d", i), ref("diff-cr-", nRoles), g.subjects(false)...))
		}
	}
	// A Role refers to its namespace only: a name in several namespaces.
	return dedupe(objs)
}

// dedupe keeps the first object of each kind, namespace and name.
func dedupe(objs []runtime.Object) []runtime.Object {
	seen := map[string]bool{}
	var out []runtime.Object
	for _, o := range objs {
		m := o.(interface {
			GetNamespace() string
			GetName() string
		})
		k := fmt.Sprintf("%T/%s/%s", o, m.GetNamespace(), m.GetName())
		if !seen[k] {
			seen[k] = true
			out = append(out, o)
		}
	}
	return out
}

// identity is a random user: a user or service account name and a few
// groups.
func (g *generator) identity() user.Info {
	name := g.pick(genUsers)
	if g.r.IntN(3) == 0 {
		name = serviceaccount.MakeUsername(g.pick(genNamespaces), g.pick(genSAs))
	}
	var groups []string
	for _, gr := range genGroups {
		if g.r.IntN(5) == 0 {
			groups = append(groups, gr)
		}
	}
	return &user.DefaultInfo{Name: name, Groups: groups}
}

// request is a random request by a random identity.
func (g *generator) request() authorizer.AttributesRecord {
	u := g.identity()
	if g.r.IntN(6) == 0 {
		return urlRequest(u, g.pick(genURLVerbs), g.pick(genPaths))
	}
	ns := g.pick(genNamespaces)
	if g.r.IntN(5) == 0 {
		ns = ""
	}
	sub := ""
	if g.r.IntN(4) == 0 {
		sub = g.pick(genSubs)
	}
	name := ""
	if g.r.IntN(2) == 0 {
		name = g.pick(genNames)
	}
	return request(u, g.pick(genVerbs), ns, g.pick(genAPIGroups), g.pick(genResources), sub, name)
}
