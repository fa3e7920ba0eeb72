package validation

import (
	"testing"

	svmv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func migration(group, resource string, conds ...metav1.Condition) *svmv1.StorageVersionMigration {
	return &svmv1.StorageVersionMigration{
		Spec:   svmv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: group, Resource: resource}},
		Status: svmv1.StorageVersionMigrationStatus{Conditions: conds},
	}
}

func cond(t svmv1.MigrationConditionType, s metav1.ConditionStatus) metav1.Condition {
	return metav1.Condition{Type: string(t), Status: s, Reason: "R", LastTransitionTime: metav1.Now()}
}

// TestStorageVersionMigrationRules: the causes kube-apiserver v1.37's
// ValidateStorageVersionMigration and its status update give.
func TestStorageVersionMigrationRules(t *testing.T) {
	withRV := func(s *svmv1.StorageVersionMigration, rv string) *svmv1.StorageVersionMigration {
		s.Status.ResourceVersion = rv
		return s
	}
	for _, tc := range []struct {
		name string
		errs field.ErrorList
		want string
	}{
		{"ok", StorageVersionMigration(migration("example.com", "widgets"), nil), ""},
		{"core group", StorageVersionMigration(migration("", "secrets"), nil), ""},
		{"no resource", StorageVersionMigration(migration("", ""), nil),
			"spec.resource.resource: Required value: resource is required to be set\n"},
		{"bad names", StorageVersionMigration(migration("Bad_Group", "9widgets"), nil),
			`spec.resource.resource: Invalid value: "9widgets": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')
spec.resource.group: Invalid value: "Bad_Group": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')
`},
		{"spec changed", StorageVersionMigration(migration("", "secrets"), migration("", "configmaps")),
			`spec: Invalid value: {"resource":{"group":"","resource":"secrets"}}: field is immutable` + "\n"},
		{"status ok", StorageVersionMigrationStatus(withRV(migration("", "secrets", cond(svmv1.MigrationRunning, metav1.ConditionTrue)), "42"), migration("", "secrets")), ""},
		{"bad resourceVersion", StorageVersionMigrationStatus(withRV(migration("", "secrets"), "042"), migration("", "secrets")),
			`status.resourceVersion: Invalid value: "042": resource version is not well formed: 042` + "\n"},
		{"resourceVersion changed", StorageVersionMigrationStatus(withRV(migration("", "secrets"), "43"), withRV(migration("", "secrets"), "42")),
			`status.resourceVersion: Invalid value: "43": field is immutable` + "\n"},
		{"both final", StorageVersionMigrationStatus(migration("", "secrets", cond(svmv1.MigrationSucceeded, metav1.ConditionTrue), cond(svmv1.MigrationFailed, metav1.ConditionTrue)), migration("", "secrets")),
			"both"},
		{"success undone", StorageVersionMigrationStatus(migration("", "secrets"), migration("", "secrets", cond(svmv1.MigrationSucceeded, metav1.ConditionTrue))),
			"undone"},
		{"failure undone", StorageVersionMigrationStatus(migration("", "secrets", cond(svmv1.MigrationFailed, metav1.ConditionFalse)), migration("", "secrets", cond(svmv1.MigrationFailed, metav1.ConditionTrue))),
			"failed undone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			for _, e := range tc.errs {
				got += e.Error() + "\n"
			}
			switch tc.want {
			case "both":
				if len(tc.errs) != 1 || tc.errs[0].Field != "status.conditions" || tc.errs[0].Detail != "Both success and failed conditions cannot be true at the same time" {
					t.Errorf("got %q", got)
				}
			case "undone":
				if len(tc.errs) != 1 || tc.errs[0].Detail != "Success condition cannot be set to false once it is true" {
					t.Errorf("got %q", got)
				}
			case "failed undone":
				if len(tc.errs) != 1 || tc.errs[0].Detail != "Failed condition cannot be set to false once it is true" {
					t.Errorf("got %q", got)
				}
			default:
				if got != tc.want {
					t.Errorf("got\n%s\nwant\n%s", got, tc.want)
				}
			}
		})
	}
}
