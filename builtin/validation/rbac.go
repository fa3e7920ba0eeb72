package validation

import (
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// RBACName is the rule of the names of Roles, ClusterRoles and their
// bindings, and of the role a binding refers to: upstream asks only that
// the name can be a URL path segment (so "system:basic-user" is one), not
// that it is a DNS subdomain as other kinds' names are. The server calls
// it in place of its DNS-subdomain rule for the RBAC kinds
// (resource.Definition.ValidateName); prefix (a generateName) is checked
// the same way, as upstream does.
func RBACName(name string, _ bool) []string { return content.IsPathSegmentName(name) }

// The rules upstream states declaratively (a required field: a rule's
// verbs, a subject's name, a roleRef's name) it reports after all the
// others, in the order of the fields in the type; so do these functions,
// so that a 422 lists its causes in kube-apiserver's order.

// Role: every rule names verbs, and API groups and resources, and no
// non-resource URL (a namespaced rule cannot have one).
func Role(obj, _ *rbacv1.Role) field.ErrorList {
	errs, required := policyRules(obj.Rules, true)
	return append(errs, required...)
}

// ClusterRole: rules as a Role's, where non-resource URLs are allowed
// (without API groups, resources or names), and an aggregationRule with at
// least one valid label selector. An update may keep a selector whose
// label values upstream no longer accepts, when the stored one has such
// a value already (upstream's AllowInvalidLabelValueInSelector).
func ClusterRole(obj, old *rbacv1.ClusterRole) field.ErrorList {
	errs, required := policyRules(obj.Rules, false)
	opts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: old != nil && hasInvalidSelectorValue(old)}
	if rule := obj.AggregationRule; rule != nil {
		path := field.NewPath("aggregationRule", "clusterRoleSelectors")
		if len(rule.ClusterRoleSelectors) == 0 {
			errs = append(errs, field.Required(path, "at least one clusterRoleSelector required if aggregationRule is non-nil"))
		}
		for i := range rule.ClusterRoleSelectors {
			sel := &rule.ClusterRoleSelectors[i]
			errs = append(errs, metav1validation.ValidateLabelSelector(sel, opts, path.Index(i))...)
			if s, err := metav1.LabelSelectorAsSelector(sel); err != nil {
				errs = append(errs, field.Invalid(path.Index(i), s, "invalid label selector."))
			}
		}
	}
	return append(errs, required...)
}

// hasInvalidSelectorValue reports whether a selector of role's
// aggregationRule has a label value the selector rules refuse.
func hasInvalidSelectorValue(role *rbacv1.ClusterRole) bool {
	if role.AggregationRule == nil {
		return false
	}
	for i := range role.AggregationRule.ClusterRoleSelectors {
		if metav1validation.LabelSelectorHasInvalidLabelValue(&role.AggregationRule.ClusterRoleSelectors[i]) {
			return true
		}
	}
	return false
}

// policyRules are upstream's checks of the rules of a Role (namespaced)
// or a ClusterRole, and apart its required verbs.
func policyRules(rules []rbacv1.PolicyRule, namespaced bool) (errs, required field.ErrorList) {
	for i := range rules {
		rule, path := &rules[i], field.NewPath("rules").Index(i)
		if len(rule.Verbs) == 0 {
			required = append(required, field.Required(path.Child("verbs"), ""))
		}
		if len(rule.NonResourceURLs) > 0 {
			if namespaced {
				errs = append(errs, field.Invalid(path.Child("nonResourceURLs"), rule.NonResourceURLs, "namespaced rules cannot apply to non-resource URLs"))
			}
			if len(rule.APIGroups) > 0 || len(rule.Resources) > 0 || len(rule.ResourceNames) > 0 {
				errs = append(errs, field.Invalid(path.Child("nonResourceURLs"), rule.NonResourceURLs, "rules cannot apply to both regular resources and non-resource URLs"))
			}
			continue
		}
		if len(rule.APIGroups) == 0 {
			errs = append(errs, field.Required(path.Child("apiGroups"), "resource rules must supply at least one api group"))
		}
		if len(rule.Resources) == 0 {
			errs = append(errs, field.Required(path.Child("resources"), "resource rules must supply at least one resource"))
		}
	}
	return errs, required
}

// RoleBinding: a roleRef to a Role or ClusterRole of the RBAC group, which
// an update may not change, and subjects that are users, groups or
// service accounts.
func RoleBinding(obj, old *rbacv1.RoleBinding) field.ErrorList {
	errs, refRequired := roleRef(obj.RoleRef, []string{"Role", "ClusterRole"})
	subjectErrs, subjectsRequired := subjects(obj.Subjects, true)
	errs = append(append(append(errs, subjectErrs...), subjectsRequired...), refRequired...)
	if old != nil {
		errs = append(errs, apivalidation.ValidateImmutableField(internalRoleRef(obj.RoleRef), internalRoleRef(old.RoleRef), field.NewPath("roleRef"))...)
	}
	return errs
}

// ClusterRoleBinding: as a RoleBinding's, its roleRef to a ClusterRole and
// its service accounts with a namespace.
func ClusterRoleBinding(obj, old *rbacv1.ClusterRoleBinding) field.ErrorList {
	errs, refRequired := roleRef(obj.RoleRef, []string{"ClusterRole"})
	subjectErrs, subjectsRequired := subjects(obj.Subjects, false)
	errs = append(append(append(errs, subjectErrs...), subjectsRequired...), refRequired...)
	if old != nil {
		errs = append(errs, apivalidation.ValidateImmutableField(internalRoleRef(obj.RoleRef), internalRoleRef(old.RoleRef), field.NewPath("roleRef"))...)
	}
	return errs
}

// roleRefValue is a roleRef as upstream's validation sees it, a type
// without JSON names: the 422 of a changed roleRef shows the value as
// {"APIGroup":...,"Kind":...,"Name":...}, as kube-apiserver's does.
type roleRefValue struct{ APIGroup, Kind, Name string }

// internalRoleRef is ref as a roleRefValue.
func internalRoleRef(ref rbacv1.RoleRef) roleRefValue {
	return roleRefValue{APIGroup: ref.APIGroup, Kind: ref.Kind, Name: ref.Name}
}

// roleRef checks a binding's roleRef: the RBAC group, one of kinds, and
// (apart) a name.
func roleRef(ref rbacv1.RoleRef, kinds []string) (errs, required field.ErrorList) {
	path := field.NewPath("roleRef")
	if ref.APIGroup != rbacv1.GroupName {
		errs = append(errs, field.NotSupported(path.Child("apiGroup"), ref.APIGroup, []string{rbacv1.GroupName}))
	}
	known := false
	for _, k := range kinds {
		known = known || ref.Kind == k
	}
	if !known {
		errs = append(errs, field.NotSupported(path.Child("kind"), ref.Kind, kinds))
	}
	if ref.Name == "" {
		required = append(required, field.Required(path.Child("name"), ""))
	} else {
		for _, msg := range RBACName(ref.Name, false) {
			errs = append(errs, field.Invalid(path.Child("name"), ref.Name, msg))
		}
	}
	return errs, required
}

// subjects checks a binding's subjects: each named, a service account
// by a valid name without API group (and, in a cluster-scoped binding,
// with its namespace), a user or group in the RBAC API group; apart,
// their required names.
func subjects(subjects []rbacv1.Subject, namespaced bool) (errs, required field.ErrorList) {
	for i := range subjects {
		s, path := &subjects[i], field.NewPath("subjects").Index(i)
		if s.Name == "" {
			required = append(required, field.Required(path.Child("name"), ""))
		}
		switch s.Kind {
		case rbacv1.ServiceAccountKind:
			if s.Name != "" {
				for _, msg := range apivalidation.NameIsDNSSubdomain(s.Name, false) {
					errs = append(errs, field.Invalid(path.Child("name"), s.Name, msg))
				}
			}
			if s.APIGroup != "" {
				errs = append(errs, field.NotSupported(path.Child("apiGroup"), s.APIGroup, []string{""}))
			}
			if !namespaced && s.Namespace == "" {
				errs = append(errs, field.Required(path.Child("namespace"), ""))
			}
		case rbacv1.UserKind, rbacv1.GroupKind:
			if s.APIGroup != rbacv1.GroupName {
				errs = append(errs, field.NotSupported(path.Child("apiGroup"), s.APIGroup, []string{rbacv1.GroupName}))
			}
		default:
			errs = append(errs, field.NotSupported(path.Child("kind"), s.Kind, []string{rbacv1.ServiceAccountKind, rbacv1.UserKind, rbacv1.GroupKind}))
		}
	}
	return errs, required
}
