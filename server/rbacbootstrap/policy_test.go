package rbacbootstrap

import (
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
