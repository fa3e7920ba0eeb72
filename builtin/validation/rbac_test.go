package validation

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestRBACRules: the causes, in order, that kube-apiserver v1.37 gives
// for the same invalid objects (recorded from `kubectl create
// --dry-run=server` against it), the metadata's excepted (the server's).
func TestRBACRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		errs field.ErrorList
		want string
	}{
		{"role", Role(&rbacv1.Role{Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, NonResourceURLs: []string{"/x"}},
			{Verbs: []string{"get"}},
		}}, nil), `rules[0].nonResourceURLs: Invalid value: ["/x"]: namespaced rules cannot apply to non-resource URLs
rules[0].nonResourceURLs: Invalid value: ["/x"]: rules cannot apply to both regular resources and non-resource URLs
rules[1].apiGroups: Required value: resource rules must supply at least one api group
rules[1].resources: Required value: resource rules must supply at least one resource
rules[0].verbs: Required value
`},
		{"aggregation without selectors", ClusterRole(&rbacv1.ClusterRole{AggregationRule: &rbacv1.AggregationRule{}}, nil),
			"aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil\n"},
		{"cluster role with URLs", ClusterRole(&rbacv1.ClusterRole{Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/x"}}}}, nil), ""},
		{"clusterrolebinding", ClusterRoleBinding(&rbacv1.ClusterRoleBinding{
			RoleRef: rbacv1.RoleRef{APIGroup: "x", Kind: "Role"},
			Subjects: []rbacv1.Subject{
				{Kind: "ServiceAccount", Name: "Bad_SA", APIGroup: "x"},
				{Kind: "Robot"},
				{Kind: "User", Name: "u", APIGroup: "nope"},
			},
		}, nil), `roleRef.apiGroup: Unsupported value: "x": supported values: "rbac.authorization.k8s.io"
roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"
subjects[0].name: Invalid value: "Bad_SA": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')
subjects[0].apiGroup: Unsupported value: "x": supported values: ""
subjects[0].namespace: Required value
subjects[1].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"
subjects[2].apiGroup: Unsupported value: "nope": supported values: "rbac.authorization.k8s.io"
subjects[1].name: Required value
roleRef.name: Required value
`},
		{"rolebinding ok", RoleBinding(&rbacv1.RoleBinding{RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:x"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "robot"}}}, nil), ""},
		{"rolebinding roleRef changed", RoleBinding(&rbacv1.RoleBinding{RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "b"}},
			&rbacv1.RoleBinding{RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "a"}}),
			`roleRef: Invalid value: {"APIGroup":"rbac.authorization.k8s.io","Kind":"Role","Name":"b"}: field is immutable` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := causes(tc.errs); got != tc.want {
				t.Fatalf("causes:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
	if msgs := RBACName("system:basic-user", false); len(msgs) != 0 {
		t.Errorf("system:basic-user: %v", msgs)
	}
	if msgs := RBACName("a/b", false); len(msgs) != 1 || msgs[0] != "may not contain '/'" {
		t.Errorf("a/b: %v", msgs)
	}
}
