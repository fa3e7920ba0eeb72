package reviews

import (
	"net/http"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// invalid is kube-apiserver's 422 for a review: its group kind has an
// empty kind (the internal object's), so the message reads
// `.authorization.k8s.io "" is invalid: ...`.
func invalid(group string, errs fieldErrors) error {
	return apierrors.NewInvalid(schema.GroupKind{Group: group}, "", errs)
}

// noUser is the 400 for a request that reached a self review without a
// user, which the authentication stage prevents.
var noUser = apierrors.NewBadRequest("no user present on request")

// selfSubjectAccessReview asks whether the request's user may do what the
// spec describes.
func (h *Handler) selfSubjectAccessReview(r *http.Request, sar *authorizationv1.SelfSubjectAccessReview) (*authorizationv1.SelfSubjectAccessReview, error) {
	if errs := validateSelfSubjectAccessReview(sar); len(errs) > 0 {
		return nil, invalid(authzGV.Group, errs)
	}
	u, ok := request.UserFrom(r.Context())
	if !ok {
		return nil, noUser
	}
	sar.Status = h.authorize(r, attributes(u, sar.Spec.ResourceAttributes, sar.Spec.NonResourceAttributes))
	return sar, nil
}

// subjectAccessReview asks whether the user the spec names may do what it
// describes.
func (h *Handler) subjectAccessReview(r *http.Request, sar *authorizationv1.SubjectAccessReview) (*authorizationv1.SubjectAccessReview, error) {
	if errs := validateSubjectAccessReview(sar); len(errs) > 0 {
		return nil, invalid(authzGV.Group, errs)
	}
	sar.Status = h.authorize(r, attributes(subject(sar.Spec), sar.Spec.ResourceAttributes, sar.Spec.NonResourceAttributes))
	return sar, nil
}

// localSubjectAccessReview is subjectAccessReview within the URL's
// namespace, which the spec's must be.
func (h *Handler) localSubjectAccessReview(r *http.Request, sar *authorizationv1.LocalSubjectAccessReview) (*authorizationv1.LocalSubjectAccessReview, error) {
	if errs := validateLocalSubjectAccessReview(sar); len(errs) > 0 {
		return nil, invalid(authzGV.Group, errs)
	}
	sar.Status = h.authorize(r, attributes(subject(sar.Spec), sar.Spec.ResourceAttributes, nil))
	return sar, nil
}

// authorize asks the authorizer and words its answer as a review's
// status: allowed or denied (neither for no opinion), its reason, and its
// error with the selectors that did not parse.
func (h *Handler) authorize(r *http.Request, attrs authorizer.AttributesRecord) authorizationv1.SubjectAccessReviewStatus {
	decision, reason, err := h.authz.Authorize(r.Context(), attrs)
	return authorizationv1.SubjectAccessReviewStatus{
		Allowed:         decision == authorizer.DecisionAllow,
		Denied:          decision == authorizer.DecisionDeny,
		Reason:          reason,
		EvaluationError: evaluationError(err, attrs),
	}
}

// subject is the user a SubjectAccessReview names.
func subject(spec authorizationv1.SubjectAccessReviewSpec) user.Info {
	var extra map[string][]string
	if spec.Extra != nil {
		extra = make(map[string][]string, len(spec.Extra))
		for k, v := range spec.Extra {
			extra[k] = v
		}
	}
	return &user.DefaultInfo{Name: spec.User, UID: spec.UID, Groups: spec.Groups, Extra: extra}
}

// attributes are the authorizer's attributes of a review's request: a
// resource request when res is set, a non-resource request otherwise. An
// empty version matches every version, as in kube-apiserver.
func attributes(u user.Info, res *authorizationv1.ResourceAttributes, nonRes *authorizationv1.NonResourceAttributes) authorizer.AttributesRecord {
	if res == nil {
		return authorizer.AttributesRecord{User: u, Verb: nonRes.Verb, Path: nonRes.Path}
	}
	attrs := authorizer.AttributesRecord{
		User: u, Verb: res.Verb, Namespace: res.Namespace, APIGroup: res.Group, APIVersion: res.Version,
		Resource: res.Resource, Subresource: res.Subresource, Name: res.Name, ResourceRequest: true,
	}
	if attrs.APIVersion == "" {
		attrs.APIVersion = "*"
	}
	if s := res.LabelSelector; s != nil {
		attrs.LabelSelectorRequirements, attrs.LabelSelectorParsingErr = labelRequirements(s)
	}
	if s := res.FieldSelector; s != nil {
		attrs.FieldSelectorRequirements, attrs.FieldSelectorParsingErr = fieldRequirements(s)
	}
	return attrs
}
