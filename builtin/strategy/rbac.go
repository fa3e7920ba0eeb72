package strategy

import (
	rbacv1 "k8s.io/api/rbac/v1"
)

// RoleBinding defaults a RoleBinding as kube-apiserver decodes one: a
// roleRef without apiGroup is of the RBAC group, as are users and groups
// among the subjects (rbacSubjects).
func RoleBinding(obj *rbacv1.RoleBinding) {
	if obj.RoleRef.APIGroup == "" {
		obj.RoleRef.APIGroup = rbacv1.GroupName
	}
	rbacSubjects(obj.Subjects)
}

// ClusterRoleBinding defaults a ClusterRoleBinding as a RoleBinding.
func ClusterRoleBinding(obj *rbacv1.ClusterRoleBinding) {
	if obj.RoleRef.APIGroup == "" {
		obj.RoleRef.APIGroup = rbacv1.GroupName
	}
	rbacSubjects(obj.Subjects)
}

// rbacSubjects gives users and groups without an apiGroup the RBAC
// group's; a service account keeps none.
func rbacSubjects(subjects []rbacv1.Subject) {
	for i := range subjects {
		s := &subjects[i]
		if s.APIGroup == "" && (s.Kind == rbacv1.UserKind || s.Kind == rbacv1.GroupKind) {
			s.APIGroup = rbacv1.GroupName
		}
	}
}
