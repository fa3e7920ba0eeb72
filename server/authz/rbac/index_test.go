package rbac

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestIndexBindingsWithoutSubjects: a RoleBinding that names nobody the
// index knows outlives its namespace's entries; writing or deleting it
// after the last binding with subjects went must not panic (it ended the
// server, found by test/builtinconf).
func TestIndexBindingsWithoutSubjects(t *testing.T) {
	x := newIndex()
	ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "r"}
	x.putRoleBinding(&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "alice"}, RoleRef: ref,
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "alice"}}})
	x.putRoleBinding(&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "nobody"}, RoleRef: ref})
	x.putRoleBinding(&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "unknown"}, RoleRef: ref,
		Subjects: []rbacv1.Subject{{Kind: "Robot", Name: "r2"}}})
	x.deleteRoleBinding(key{"ns", "alice"})
	x.putRoleBinding(&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "nobody"}, RoleRef: ref})
	x.deleteRoleBinding(key{"ns", "nobody"})
	x.deleteRoleBinding(key{"ns", "unknown"})
	if len(x.roleBindings) != 0 || len(x.namespaced) != 0 {
		t.Errorf("left %d bindings, %d namespaces", len(x.roleBindings), len(x.namespaced))
	}
}
