package rbacbootstrap

import (
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/auth/rbac/validation"

	"github.com/apiloom/apiloom/server/resource"
)

// TestUserKindRoles: one admin and one view role per group of the user
// kinds (not the built-ins), each resource once whatever its versions,
// scale in both, status only in view.
func TestUserKindRoles(t *testing.T) {
	infos := []*resource.Info{
		{Group: "a.dev", Version: "v1", Plural: "dbs", HasStatus: true, Scale: &resource.ScaleInfo{}},
		{Group: "a.dev", Version: "v2", Plural: "dbs", HasStatus: true, Scale: &resource.ScaleInfo{}},
		{Group: "b.dev", Version: "v1", Plural: "zones"},
		{Group: "a.dev", Version: "v1", Plural: "apps"},
		{Group: "", Version: "v1", Plural: "configmaps", BuiltIn: true},
	}
	roles := UserKindRoles(infos)
	var got []string
	for _, r := range roles {
		got = append(got, r.Name)
	}
	if !slices.Equal(got, []string{"apiloom:aggregate-to-admin:a.dev", "apiloom:aggregate-to-view:a.dev",
		"apiloom:aggregate-to-admin:b.dev", "apiloom:aggregate-to-view:b.dev"}) {
		t.Fatalf("roles %q", got)
	}
	admin, view := roles[0], roles[1]
	if admin.Labels[AggregateToAdmin] != "true" || admin.Labels[AggregateToEdit] != "true" || admin.Labels[AggregateToView] != "" {
		t.Errorf("admin labels %v", admin.Labels)
	}
	if view.Labels[AggregateToView] != "true" || len(view.Labels) != 2 {
		t.Errorf("view labels %v", view.Labels)
	}
	if r := admin.Rules; len(r) != 1 || !slices.Equal(r[0].Resources, []string{"apps", "dbs", "dbs/scale"}) ||
		!slices.Equal(r[0].Verbs, readWrite) || !slices.Equal(r[0].APIGroups, []string{"a.dev"}) {
		t.Errorf("admin rules %+v", r)
	}
	if r := view.Rules; len(r) != 1 || !slices.Equal(r[0].Resources, []string{"apps", "dbs", "dbs/scale", "dbs/status"}) ||
		!slices.Equal(r[0].Verbs, read) {
		t.Errorf("view rules %+v", r)
	}
}

// TestUserKindRolesCustomSubresources: a kind's own subresources are
// granted by what they do, as upstream grants pods/eviction (edit: create)
// and pods/log (view: get): the admin role (aggregated to admin and edit)
// may create an action and get a view or a stream; the view role may get
// a view or a stream and nothing of an action. A subresource the server
// serves itself (Type "") is not granted here.
func TestUserKindRolesCustomSubresources(t *testing.T) {
	db := func(version string) *resource.Info {
		return &resource.Info{Group: "example.apiloom.dev", Version: version, Plural: "databases", HasStatus: true,
			Subresources: []resource.SubresourceInfo{
				{Name: "backup", Verbs: []string{"create"}, Type: resource.Action},
				{Name: "connection", Verbs: []string{"get"}, Type: resource.View},
				{Name: "logs", Verbs: []string{"get"}, Type: resource.Stream},
				{Name: "token", Verbs: []string{"create"}},
			}}
	}
	roles := UserKindRoles([]*resource.Info{db("v1"), db("v2"), {Group: "example.apiloom.dev", Version: "v1", Plural: "regions"}})
	if len(roles) != 2 {
		t.Fatalf("%d roles", len(roles))
	}
	admin, view := roles[0], roles[1]
	rules := func(resource string, verbs ...string) []rbacv1.PolicyRule {
		return []rbacv1.PolicyRule{{APIGroups: []string{"example.apiloom.dev"}, Resources: []string{resource}, Verbs: verbs}}
	}
	for _, tc := range []struct {
		role     *rbacv1.ClusterRole
		resource string
		verb     string
		want     bool
	}{
		{admin, "databases/backup", "create", true},
		{admin, "databases/backup", "get", false},
		{admin, "databases/connection", "get", true},
		{admin, "databases/connection", "create", false},
		{admin, "databases/logs", "get", true},
		{admin, "databases/token", "create", false},
		{admin, "databases/status", "update", false},
		{admin, "regions/backup", "create", false},
		{view, "databases/backup", "create", false},
		{view, "databases/backup", "get", false},
		{view, "databases/connection", "get", true},
		{view, "databases/logs", "get", true},
		{view, "databases/logs", "list", false},
		{view, "databases/token", "get", false},
	} {
		if got, _ := validation.Covers(tc.role.Rules, rules(tc.resource, tc.verb)); got != tc.want {
			t.Errorf("%s allows %s %s: %v, want %v", tc.role.Name, tc.verb, tc.resource, got, tc.want)
		}
	}
	// One rule per grant, each resource once whatever its versions.
	if len(admin.Rules) != 3 || !slices.Equal(admin.Rules[1].Resources, []string{"databases/backup"}) ||
		!slices.Equal(admin.Rules[2].Resources, []string{"databases/connection", "databases/logs"}) {
		t.Errorf("admin rules %+v", admin.Rules)
	}
	if len(view.Rules) != 2 || !slices.Equal(view.Rules[1].Resources, []string{"databases/connection", "databases/logs"}) {
		t.Errorf("view rules %+v", view.Rules)
	}
}

// TestReconciled: reconciling adds what is missing and keeps what is
// there; a role or binding that has everything is unchanged.
func TestReconciled(t *testing.T) {
	p := Default(nil)
	want := p.ClusterRoles[slices.IndexFunc(p.ClusterRoles, func(r *rbacv1.ClusterRole) bool { return r.Name == "system:basic-user" })]
	if _, changed := ReconciledRole(want, want); changed {
		t.Error("an identical role changed")
	}
	have := want.DeepCopy()
	have.Rules = append(have.Rules[:1:1], rbacv1.PolicyRule{APIGroups: []string{"x"}, Resources: []string{"y"}, Verbs: []string{"get"}})
	have.Labels = map[string]string{"mine": "1", Bootstrapping: "changed"}
	have.Annotations = nil
	got, changed := ReconciledRole(have, want)
	if !changed || len(got.Rules) != 3 || got.Rules[1].APIGroups[0] != "x" || got.Labels["mine"] != "1" ||
		got.Labels[Bootstrapping] != "changed" || got.Annotations[AutoUpdate] != "true" {
		t.Fatalf("reconciled %+v", got)
	}
	if len(have.Rules) != 2 {
		t.Error("have changed")
	}

	admin := p.ClusterRoles[1]
	mine := admin.DeepCopy()
	mine.AggregationRule.ClusterRoleSelectors = []metav1.LabelSelector{{MatchLabels: map[string]string{"x": "y"}}}
	got, changed = ReconciledRole(mine, admin)
	if !changed || len(got.AggregationRule.ClusterRoleSelectors) != 2 {
		t.Fatalf("aggregation %+v", got.AggregationRule)
	}

	b := p.ClusterRoleBindings[3]
	hb := b.DeepCopy()
	hb.Subjects = []rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: "ann"}, b.Subjects[1]}
	gb, changed := ReconciledBinding(hb, b)
	if !changed || len(gb.Subjects) != 3 || gb.Subjects[2] != b.Subjects[0] {
		t.Fatalf("binding subjects %+v", gb.Subjects)
	}
	hb.RoleRef.Name = "other"
	if gb, _ := ReconciledBinding(hb, b); gb.RoleRef != b.RoleRef {
		t.Errorf("roleRef %+v", gb.RoleRef)
	}
}
