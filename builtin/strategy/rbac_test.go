package strategy

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

// TestRBACDefaults: a binding's roleRef and its users and groups get the
// RBAC group when they name none, service accounts none, as upstream
// defaults them; what is set stays.
func TestRBACDefaults(t *testing.T) {
	subjects := func() []rbacv1.Subject {
		return []rbacv1.Subject{{Kind: "User", Name: "u"}, {Kind: "Group", Name: "g"}, {Kind: "ServiceAccount", Name: "s"}, {Kind: "User", Name: "v", APIGroup: "x"}}
	}
	check := func(ref rbacv1.RoleRef, got []rbacv1.Subject) {
		t.Helper()
		if ref.APIGroup != rbacv1.GroupName || got[0].APIGroup != rbacv1.GroupName || got[1].APIGroup != rbacv1.GroupName ||
			got[2].APIGroup != "" || got[3].APIGroup != "x" {
			t.Fatalf("defaulted %+v %+v", ref, got)
		}
	}
	rb := &rbacv1.RoleBinding{RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "r"}, Subjects: subjects()}
	RoleBinding(rb)
	check(rb.RoleRef, rb.Subjects)
	crb := &rbacv1.ClusterRoleBinding{RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "r"}, Subjects: subjects()}
	ClusterRoleBinding(crb)
	check(crb.RoleRef, crb.Subjects)
}
