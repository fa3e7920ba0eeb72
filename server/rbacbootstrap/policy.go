// Package rbacbootstrap is the default RBAC policy apiloom creates at
// start, as kube-apiserver's rbac/bootstrap-roles does: the ClusterRoles
// cluster-admin, admin, edit and view (the last three aggregated from the
// ClusterRoles labelled aggregate-to-admin, -edit and -view), the
// system:aggregate-to-* roles of the built-in kinds apiloom serves,
// system:basic-user, system:discovery and system:public-info-viewer with
// their ClusterRoleBindings, system:auth-delegator (unbound), and for every user kind's API group the
// ClusterRoles that add it to admin, edit and view (what a CRD's author
// writes by hand). Reconcile creates what is missing and adds back to
// existing objects what they lack, as upstream reconciles them.
package rbacbootstrap

import (
	"slices"
	"sort"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/resource"
)

// The labels and annotations of the default policy, upstream's.
const (
	// AutoUpdate is the annotation of objects Reconcile keeps up to date;
	// "false" leaves an object as its owner changed it.
	AutoUpdate = rbacv1.AutoUpdateAnnotationKey
	// Bootstrapping labels every object of the default policy.
	Bootstrapping = "kubernetes.io/bootstrapping"
	// AggregateToAdmin, AggregateToEdit and AggregateToView label the
	// ClusterRoles whose rules admin, edit and view gather.
	AggregateToAdmin = "rbac.authorization.k8s.io/aggregate-to-admin"
	AggregateToEdit  = "rbac.authorization.k8s.io/aggregate-to-edit"
	AggregateToView  = "rbac.authorization.k8s.io/aggregate-to-view"
)

// Policy is the default ClusterRoles and ClusterRoleBindings.
type Policy struct {
	ClusterRoles        []*rbacv1.ClusterRole
	ClusterRoleBindings []*rbacv1.ClusterRoleBinding
}

// Verbs of the default roles, as upstream groups them.
var (
	read      = []string{"get", "list", "watch"}
	readWrite = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
	write     = []string{"create", "delete", "deletecollection", "patch", "update"}
)

// meta is the metadata of a default object named name, with extra labels.
func meta(name string, labels ...string) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: name, Labels: map[string]string{Bootstrapping: "rbac-defaults"},
		Annotations: map[string]string{AutoUpdate: "true"}}
	for _, l := range labels {
		m.Labels[l] = "true"
	}
	return m
}

// rule is a resource rule.
func rule(groups, resources, verbs []string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: groups, Resources: resources, Verbs: verbs}
}

// aggregated is a ClusterRole gathering those labelled label.
func aggregated(name, label string, labels ...string) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{ObjectMeta: meta(name, labels...), AggregationRule: &rbacv1.AggregationRule{
		ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{label: "true"}}}}}
}

// groupBinding binds the ClusterRole name to groups.
func groupBinding(name string, groups ...string) *rbacv1.ClusterRoleBinding {
	b := &rbacv1.ClusterRoleBinding{ObjectMeta: meta(name),
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}}
	for _, g := range groups {
		b.Subjects = append(b.Subjects, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: g})
	}
	return b
}

// Default is the default policy for a server serving the kinds of infos:
// upstream's roles and bindings, and the aggregated roles of each user
// kind's API group (UserKindRoles).
//
// The system:aggregate-to-* roles keep upstream's rules only for the
// resources apiloom can serve (configmaps, secrets, serviceaccounts, namespaces, events of
// both groups, leases, the RBAC kinds and localsubjectaccessreviews), in
// upstream's words and order: a rule on a kind apiloom never serves
// (pods, deployments, ...) grants nothing here, but would let a user
// define a kind of that name in that group and find it granted, so it is
// left out. They do not depend on --builtin-apis: a rule on a kind not
// served grants nothing.
func Default(infos []*resource.Info) Policy {
	p := Policy{
		ClusterRoles: []*rbacv1.ClusterRole{
			{ObjectMeta: meta("cluster-admin"), Rules: []rbacv1.PolicyRule{
				rule([]string{"*"}, []string{"*"}, []string{"*"}),
				{NonResourceURLs: []string{"*"}, Verbs: []string{"*"}},
			}},
			aggregated("admin", AggregateToAdmin),
			aggregated("edit", AggregateToEdit, AggregateToAdmin),
			aggregated("view", AggregateToView, AggregateToEdit),
			{ObjectMeta: meta("system:aggregate-to-admin", AggregateToAdmin), Rules: []rbacv1.PolicyRule{
				rule([]string{"authorization.k8s.io"}, []string{"localsubjectaccessreviews"}, []string{"create"}),
				rule([]string{rbacv1.GroupName}, []string{"rolebindings", "roles"}, readWrite),
			}},
			{ObjectMeta: meta("system:aggregate-to-edit", AggregateToEdit), Rules: []rbacv1.PolicyRule{
				rule([]string{""}, []string{"secrets"}, read),
				rule([]string{""}, []string{"configmaps", "secrets"}, write),
				rule([]string{"", "events.k8s.io"}, []string{"events"}, write),
				rule([]string{"coordination.k8s.io"}, []string{"leases"}, readWrite),
				rule([]string{""}, []string{"serviceaccounts"}, []string{"impersonate"}),
				rule([]string{""}, []string{"serviceaccounts"}, write),
				rule([]string{""}, []string{"serviceaccounts/token"}, []string{"create"}),
			}},
			{ObjectMeta: meta("system:aggregate-to-view", AggregateToView), Rules: []rbacv1.PolicyRule{
				rule([]string{""}, []string{"configmaps"}, read),
				rule([]string{""}, []string{"namespaces/status"}, read),
				rule([]string{""}, []string{"namespaces"}, read),
				rule([]string{"", "events.k8s.io"}, []string{"events"}, read),
				rule([]string{""}, []string{"serviceaccounts"}, read),
			}},
			{ObjectMeta: meta("system:basic-user"), Rules: []rbacv1.PolicyRule{
				rule([]string{"authorization.k8s.io"}, []string{"selfsubjectaccessreviews", "selfsubjectrulesreviews"}, []string{"create"}),
				rule([]string{"authentication.k8s.io"}, []string{"selfsubjectreviews"}, []string{"create"}),
			}},
			// For servers that delegate authentication and authorization
			// to this one (an aggregated server, a kubelet): bound by
			// their owners, not by default, as upstream.
			{ObjectMeta: meta("system:auth-delegator"), Rules: []rbacv1.PolicyRule{
				rule([]string{"authentication.k8s.io"}, []string{"tokenreviews"}, []string{"create"}),
				rule([]string{"authorization.k8s.io"}, []string{"subjectaccessreviews"}, []string{"create"}),
			}},
			{ObjectMeta: meta("system:discovery"), Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{
				"/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/",
			}}}},
			{ObjectMeta: meta("system:public-info-viewer"), Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{
				"/healthz", "/livez", "/readyz", "/version", "/version/",
			}}}},
			// What a relying party inside the cluster reads to verify
			// ServiceAccount tokens (with the trailing-slash forms, as
			// upstream, for clients generated from old OpenAPI).
			{ObjectMeta: meta("system:service-account-issuer-discovery"), Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{
				"/.well-known/openid-configuration", "/.well-known/openid-configuration/", "/openid/v1/jwks", "/openid/v1/jwks/",
			}}}},
		},
		ClusterRoleBindings: []*rbacv1.ClusterRoleBinding{
			groupBinding("cluster-admin", "system:masters"),
			groupBinding("system:basic-user", "system:authenticated"),
			groupBinding("system:discovery", "system:authenticated"),
			groupBinding("system:public-info-viewer", "system:authenticated", "system:unauthenticated"),
			groupBinding("system:service-account-issuer-discovery", "system:serviceaccounts"),
		},
	}
	p.ClusterRoles = append(p.ClusterRoles, UserKindRoles(infos)...)
	return p
}

// UserKindRoles are, for each API group of the user kinds in infos (not
// the built-ins), two ClusterRoles that admin, edit and view aggregate:
//
//   - apiloom:aggregate-to-admin:<group>, labelled aggregate-to-admin and
//     aggregate-to-edit: every verb on the kinds' resources and on their
//     scale subresources, what upstream's edit grants on deployments.
//     Status is left out, as upstream's edit leaves it: a controller
//     writes it.
//   - apiloom:aggregate-to-view:<group>, labelled aggregate-to-view:
//     get, list and watch on the resources, their status and their scale
//     subresources, what upstream's view grants on deployments.
//
// A kind's own subresources (resource.Info.Subresources with a Type) are
// granted by what they do, as upstream grants pods/eviction to edit and
// pods/log to view: create on each action ("databases/backup") in the
// role aggregated to admin and edit only, since an action may write; get
// on each view and stream ("databases/connection", "databases/logs") in
// that role and in view's, since they only read.
//
// Resources are sorted, each once however many versions serve it; a
// group's roles are in the group's order of first appearance.
func UserKindRoles(infos []*resource.Info) []*rbacv1.ClusterRole {
	type access struct{ all, read, actions, reads map[string]bool }
	byGroup := map[string]*access{}
	var groups []string
	for _, info := range infos {
		if info.BuiltIn {
			continue
		}
		a := byGroup[info.Group]
		if a == nil {
			a = &access{all: map[string]bool{}, read: map[string]bool{}, actions: map[string]bool{}, reads: map[string]bool{}}
			byGroup[info.Group] = a
			groups = append(groups, info.Group)
		}
		a.all[info.Plural], a.read[info.Plural] = true, true
		if info.HasStatus {
			a.read[info.Plural+"/status"] = true
		}
		if info.Scale != nil {
			a.all[info.Plural+"/scale"], a.read[info.Plural+"/scale"] = true, true
		}
		for _, sub := range info.Subresources {
			switch sub.Type {
			case resource.Action:
				a.actions[info.Plural+"/"+sub.Name] = true
			case resource.View, resource.Stream:
				a.reads[info.Plural+"/"+sub.Name] = true
			}
		}
	}
	var out []*rbacv1.ClusterRole
	for _, g := range groups {
		a := byGroup[g]
		admin := []rbacv1.PolicyRule{rule([]string{g}, sortedKeys(a.all), readWrite)}
		view := []rbacv1.PolicyRule{rule([]string{g}, sortedKeys(a.read), read)}
		if len(a.actions) > 0 {
			admin = append(admin, rule([]string{g}, sortedKeys(a.actions), []string{"create"}))
		}
		if len(a.reads) > 0 {
			admin = append(admin, rule([]string{g}, sortedKeys(a.reads), []string{"get"}))
			view = append(view, rule([]string{g}, sortedKeys(a.reads), []string{"get"}))
		}
		out = append(out,
			&rbacv1.ClusterRole{ObjectMeta: meta("apiloom:aggregate-to-admin:"+g, AggregateToAdmin, AggregateToEdit), Rules: admin},
			&rbacv1.ClusterRole{ObjectMeta: meta("apiloom:aggregate-to-view:"+g, AggregateToView), Rules: view},
		)
	}
	return out
}

// sortedKeys are m's keys, sorted.
func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return slices.Clip(out)
}
