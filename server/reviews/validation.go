package reviews

import (
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// fieldErrors is a review's validation result.
type fieldErrors = field.ErrorList

// The reviews' rules, as kube-apiserver v1.37 states and words them. Values
// are shown as kube-apiserver shows its internal types, whose fields have
// no JSON names ({"Path":"/x","Verb":"get"}).

// nonResourceValue is how an error shows nonResourceAttributes.
type nonResourceValue struct{ Path, Verb string }

func showNonResource(a *authorizationv1.NonResourceAttributes) any {
	if a == nil {
		return nil
	}
	return &nonResourceValue{Path: a.Path, Verb: a.Verb}
}

// validateAttributes checks that exactly one kind of attributes is set,
// and the resource attributes' selectors.
func validateAttributes(res *authorizationv1.ResourceAttributes, nonRes *authorizationv1.NonResourceAttributes) fieldErrors {
	var errs fieldErrors
	spec := field.NewPath("spec")
	if (res == nil) == (nonRes == nil) {
		errs = append(errs, field.Invalid(spec, showNonResource(nonRes), "exactly one of nonResourceAttributes or resourceAttributes must be specified"))
	}
	if res != nil {
		path := spec.Child("resourceAttributes")
		if s := res.FieldSelector; s != nil {
			errs = append(errs, validateSelector(path.Child("fieldSelector"), s.RawSelector, len(s.Requirements))...)
			for i, r := range s.Requirements {
				errs = append(errs, metav1validation.ValidateFieldSelectorRequirement(r,
					metav1validation.FieldSelectorValidationOptions{AllowUnknownOperatorInRequirement: true},
					path.Child("fieldSelector", "requirements").Index(i))...)
			}
		}
		if s := res.LabelSelector; s != nil {
			errs = append(errs, validateSelector(path.Child("labelSelector"), s.RawSelector, len(s.Requirements))...)
			for i, r := range s.Requirements {
				errs = append(errs, metav1validation.ValidateLabelSelectorRequirement(r,
					metav1validation.LabelSelectorValidationOptions{AllowUnknownOperatorInRequirement: true},
					path.Child("labelSelector", "requirements").Index(i))...)
			}
		}
	}
	return errs
}

// validateSelector checks that a selector is either raw or requirements.
func validateSelector(path *field.Path, raw string, requirements int) fieldErrors {
	switch {
	case raw != "" && requirements > 0:
		return fieldErrors{field.Invalid(path.Child("rawSelector"), raw, "may not specified at the same time as requirements")}
	case raw == "" && requirements == 0:
		return fieldErrors{field.Required(path.Child("requirements"), fmt.Sprintf("when %s is specified, requirements or rawSelector is required", path))}
	}
	return nil
}

// validateSubject checks that a SubjectAccessReview names someone.
func validateSubject(spec authorizationv1.SubjectAccessReviewSpec) fieldErrors {
	if spec.User == "" && len(spec.Groups) == 0 {
		return fieldErrors{field.Invalid(field.NewPath("spec", "user"), spec.User, "at least one of user or group must be specified")}
	}
	return nil
}

// validateEmptyMeta checks that a review's metadata is empty but for its
// managed fields (and, for a LocalSubjectAccessReview, its namespace).
func validateEmptyMeta(m metav1.ObjectMeta, keepNamespace bool) fieldErrors {
	c := m
	c.ManagedFields = nil
	msg := "must be empty"
	if keepNamespace {
		c.Namespace = ""
		msg = "must be empty except for namespace"
	}
	if apiequality.Semantic.DeepEqual(metav1.ObjectMeta{}, c) {
		return nil
	}
	return fieldErrors{field.Invalid(field.NewPath("metadata"), m, msg)}
}

func validateSelfSubjectAccessReview(sar *authorizationv1.SelfSubjectAccessReview) fieldErrors {
	errs := validateAttributes(sar.Spec.ResourceAttributes, sar.Spec.NonResourceAttributes)
	return append(errs, validateEmptyMeta(sar.ObjectMeta, false)...)
}

// validateSubjectAccessReviewSpec orders its errors as kube-apiserver
// does: the attributes' union, the subject, then the selectors.
func validateSubjectAccessReviewSpec(spec authorizationv1.SubjectAccessReviewSpec) fieldErrors {
	union := validateAttributes(spec.ResourceAttributes, spec.NonResourceAttributes)
	var errs fieldErrors
	if len(union) > 0 && union[0].Field == "spec" {
		errs, union = append(errs, union[0]), union[1:]
	}
	errs = append(errs, validateSubject(spec)...)
	return append(errs, union...)
}

func validateSubjectAccessReview(sar *authorizationv1.SubjectAccessReview) fieldErrors {
	errs := validateSubjectAccessReviewSpec(sar.Spec)
	return append(errs, validateEmptyMeta(sar.ObjectMeta, false)...)
}

func validateLocalSubjectAccessReview(sar *authorizationv1.LocalSubjectAccessReview) fieldErrors {
	errs := validateSubjectAccessReviewSpec(sar.Spec)
	errs = append(errs, validateEmptyMeta(sar.ObjectMeta, true)...)
	if res := sar.Spec.ResourceAttributes; res != nil && res.Namespace != sar.Namespace {
		errs = append(errs, field.Invalid(field.NewPath("spec", "resourceAttributes", "namespace"), res.Namespace, "must match metadata.namespace"))
	}
	if nonRes := sar.Spec.NonResourceAttributes; nonRes != nil {
		errs = append(errs, field.Invalid(field.NewPath("spec", "nonResourceAttributes"), showNonResource(nonRes), "disallowed on this kind of request"))
	}
	return errs
}
