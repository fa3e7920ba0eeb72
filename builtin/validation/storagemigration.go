package validation

import (
	"strings"

	svmv1 "k8s.io/api/storagemigration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// StorageVersionMigration is kube-apiserver's rule for a migration
// (ValidateStorageVersionMigration and, on update, its immutable spec):
// spec.resource.resource is required and a DNS-1035 label,
// spec.resource.group, when given, a DNS-1123 subdomain (the rules of an
// APIService's group and resource), and the spec never changes after
// create, since the controller's progress is only meaningful for the
// resource it started on.
func StorageVersionMigration(obj, old *svmv1.StorageVersionMigration) field.ErrorList {
	var errs field.ErrorList
	res := obj.Spec.Resource
	path := field.NewPath("spec", "resource")
	if res.Resource == "" {
		errs = append(errs, field.Required(path.Child("resource"), "resource is required to be set"))
	} else if msgs := validation.IsDNS1035Label(res.Resource); len(msgs) > 0 {
		errs = append(errs, field.Invalid(path.Child("resource"), res.Resource, strings.Join(msgs, ",")))
	}
	if res.Group != "" {
		if msgs := validation.IsDNS1123Subdomain(res.Group); len(msgs) > 0 {
			errs = append(errs, field.Invalid(path.Child("group"), res.Group, strings.Join(msgs, ",")))
		}
	}
	if old != nil && !equality.Semantic.DeepEqual(obj.Spec, old.Spec) {
		errs = append(errs, field.Invalid(field.NewPath("spec"), obj.Spec, "field is immutable"))
	}
	return errs
}

// StorageVersionMigrationStatus is kube-apiserver's rule for a write to
// storageversionmigrations/NAME/status
// (ValidateStorageVersionMigrationStatusUpdate): status.resourceVersion
// is a well-formed resource version (a decimal integer without leading
// zeros, upstream's CompareResourceVersion) and immutable once set, the conditions are well-formed, Succeeded and
// Failed are never both true, and neither goes back once true: a
// finished migration stays finished.
func StorageVersionMigrationStatus(obj, old *svmv1.StorageVersionMigration) field.ErrorList {
	path := field.NewPath("status")
	var errs field.ErrorList
	if rv := obj.Status.ResourceVersion; rv != "" {
		if _, err := resourceversion.CompareResourceVersion(rv, rv); err != nil {
			errs = append(errs, field.Invalid(path.Child("resourceVersion"), rv, err.Error()))
		}
	}
	errs = append(errs, metav1validation.ValidateConditions(obj.Status.Conditions, path.Child("conditions"))...)
	if old.Status.ResourceVersion != "" && old.Status.ResourceVersion != obj.Status.ResourceVersion {
		errs = append(errs, field.Invalid(path.Child("resourceVersion"), obj.Status.ResourceVersion, "field is immutable"))
	}
	conds := path.Child("conditions")
	if migrationIs(obj, svmv1.MigrationSucceeded) && migrationIs(obj, svmv1.MigrationFailed) {
		errs = append(errs, field.Invalid(conds, obj.Status.Conditions, "Both success and failed conditions cannot be true at the same time"))
	}
	if migrationIs(old, svmv1.MigrationSucceeded) && !migrationIs(obj, svmv1.MigrationSucceeded) {
		errs = append(errs, field.Invalid(conds, obj.Status.Conditions, "Success condition cannot be set to false once it is true"))
	}
	if migrationIs(old, svmv1.MigrationFailed) && !migrationIs(obj, svmv1.MigrationFailed) {
		errs = append(errs, field.Invalid(conds, obj.Status.Conditions, "Failed condition cannot be set to false once it is true"))
	}
	return errs
}

// migrationIs reports whether the migration's condition t is True.
func migrationIs(obj *svmv1.StorageVersionMigration, t svmv1.MigrationConditionType) bool {
	return meta.IsStatusConditionTrue(obj.Status.Conditions, string(t))
}
