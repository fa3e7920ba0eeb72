package printers

import (
	"fmt"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/apiloom/apiloom/server/resource"
)

// metaDocs are the descriptions kube-apiserver gives the metadata columns.
var metaDocs = metav1.ObjectMeta{}.SwaggerDoc()

// roleColumns are what kube-apiserver answers for Roles and ClusterRoles,
// which have no printer of their own there: its default Table, the name
// and the creation time as a timestamp (kubectl's CREATED AT).
var roleColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: metaDocs["name"]},
	{Name: "Created At", Type: "date", Description: metaDocs["creationTimestamp"]},
}

// roleCells are the cells of roleColumns.
func roleCells(m metav1.Object) []any {
	return []any{m.GetName(), m.GetCreationTimestamp().UTC().Format(time.RFC3339)}
}

// Role is the Table of Roles.
var Role = &resource.Printer[*rbacv1.Role]{Columns: roleColumns, Cells: func(r *rbacv1.Role, _ time.Time) []any {
	return roleCells(r)
}}

// ClusterRole is the Table of ClusterRoles.
var ClusterRole = &resource.Printer[*rbacv1.ClusterRole]{Columns: roleColumns, Cells: func(r *rbacv1.ClusterRole, _ time.Time) []any {
	return roleCells(r)
}}

// bindingColumns are kube-apiserver's columns of a binding of kind
// ("roleBinding", "clusterRoleBinding"): kubectl shows NAME, ROLE and AGE,
// and the subjects with -o wide.
func bindingColumns(kind, roleRefDoc string) []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: metaDocs["name"]},
		{Name: "Role", Type: "string", Description: roleRefDoc},
		{Name: "Age", Type: "string", Description: metaDocs["creationTimestamp"]},
		{Name: "Users", Type: "string", Priority: 1, Description: "Users in the " + kind},
		{Name: "Groups", Type: "string", Priority: 1, Description: "Groups in the " + kind},
		{Name: "ServiceAccounts", Type: "string", Priority: 1, Description: "ServiceAccounts in the " + kind},
	}
}

// bindingCells are a binding's cells: its role as Kind/name, its age,
// and its users, groups and service accounts (namespace/name), each
// joined by ", ".
func bindingCells(m metav1.Object, ref rbacv1.RoleRef, subjects []rbacv1.Subject, now time.Time) []any {
	users, groups, sas := []string{}, []string{}, []string{}
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.ServiceAccountKind:
			sas = append(sas, s.Namespace+"/"+s.Name)
		case rbacv1.UserKind:
			users = append(users, s.Name)
		case rbacv1.GroupKind:
			groups = append(groups, s.Name)
		}
	}
	age := "<unknown>"
	if t := m.GetCreationTimestamp(); !t.IsZero() {
		age = duration.HumanDuration(now.Sub(t.Time))
	}
	return []any{m.GetName(), fmt.Sprintf("%s/%s", ref.Kind, ref.Name), age,
		strings.Join(users, ", "), strings.Join(groups, ", "), strings.Join(sas, ", ")}
}

// RoleBinding is the Table of RoleBindings.
var RoleBinding = &resource.Printer[*rbacv1.RoleBinding]{
	Columns: bindingColumns("roleBinding", rbacv1.RoleBinding{}.SwaggerDoc()["roleRef"]),
	Cells: func(b *rbacv1.RoleBinding, now time.Time) []any {
		return bindingCells(b, b.RoleRef, b.Subjects, now)
	},
}

// ClusterRoleBinding is the Table of ClusterRoleBindings.
var ClusterRoleBinding = &resource.Printer[*rbacv1.ClusterRoleBinding]{
	Columns: bindingColumns("clusterRoleBinding", rbacv1.ClusterRoleBinding{}.SwaggerDoc()["roleRef"]),
	Cells: func(b *rbacv1.ClusterRoleBinding, now time.Time) []any {
		return bindingCells(b, b.RoleRef, b.Subjects, now)
	},
}
