package reviews

import (
	"net/http"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// selfSubjectRulesReview lists what the request's user may do in the
// spec's namespace, as the rule resolver knows it. The answer is a new
// review (kube-apiserver echoes neither metadata nor spec); a resolver
// error becomes status.evaluationError beside whatever rules it did
// resolve, and incomplete says the list may lack rules (other authorizers
// than the resolver's may allow more).
func (h *Handler) selfSubjectRulesReview(r *http.Request, in *authorizationv1.SelfSubjectRulesReview) (*authorizationv1.SelfSubjectRulesReview, error) {
	u, ok := request.UserFrom(r.Context())
	if !ok {
		return nil, noUser
	}
	if in.Spec.Namespace == "" {
		return nil, apierrors.NewBadRequest("no namespace on request")
	}
	resRules, nonResRules, incomplete, err := h.rules.RulesFor(r.Context(), u, in.Spec.Namespace)
	out := &authorizationv1.SelfSubjectRulesReview{Status: authorizationv1.SubjectRulesReviewStatus{
		ResourceRules:    make([]authorizationv1.ResourceRule, len(resRules)),
		NonResourceRules: make([]authorizationv1.NonResourceRule, len(nonResRules)),
		Incomplete:       incomplete,
	}}
	for i, rule := range resRules {
		out.Status.ResourceRules[i] = authorizationv1.ResourceRule{
			Verbs: rule.GetVerbs(), APIGroups: rule.GetAPIGroups(), Resources: rule.GetResources(), ResourceNames: rule.GetResourceNames(),
		}
	}
	for i, rule := range nonResRules {
		out.Status.NonResourceRules[i] = authorizationv1.NonResourceRule{Verbs: rule.GetVerbs(), NonResourceURLs: rule.GetNonResourceURLs()}
	}
	if err != nil {
		out.Status.EvaluationError = err.Error()
	}
	return out, nil
}
