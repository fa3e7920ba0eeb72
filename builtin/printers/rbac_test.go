package printers

import (
	"slices"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestRBACTables: the cells kube-apiserver prints for a binding (role,
// age, users, groups and service accounts) and a role (name and creation
// time).
func TestRBACTables(t *testing.T) {
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	b := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "b", CreationTimestamp: metav1.NewTime(created)},
		RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: "ann"}, {Kind: "Group", Name: "devs"}, {Kind: "User", Name: "bob"},
			{Kind: "ServiceAccount", Namespace: "ns", Name: "robot"}}}
	got := ClusterRoleBinding.Cells(b, created.Add(90*time.Second))
	if want := []any{"b", "ClusterRole/view", "90s", "ann, bob", "devs", "ns/robot"}; !slices.Equal(got, want) {
		t.Fatalf("binding cells %q, want %q", got, want)
	}
	if n := len(ClusterRoleBinding.Columns); n != len(got) || ClusterRoleBinding.Columns[3].Priority != 1 {
		t.Fatalf("binding columns %+v", ClusterRoleBinding.Columns)
	}
	r := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "r", CreationTimestamp: metav1.NewTime(created)}}
	if got := Role.Cells(r, time.Now()); !slices.Equal(got, []any{"r", "2026-01-02T03:04:05Z"}) {
		t.Fatalf("role cells %q", got)
	}
}
