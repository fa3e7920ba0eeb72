package reviews

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/authentication/authenticator"
)

// badAudiences is upstream's 500 for an authenticator that accepted a
// token for none of the audiences asked for: a bug in it, not the
// token's fault.
var badAudiences = apierrors.NewInternalError(errors.New("error validating audiences"))

// tokenReview says who spec.token is, by asking the server's own request
// authenticator about a request carrying nothing but that token, as
// kube-apiserver does: a token it refuses is authenticated=false with the
// reason in status.error, not an error of the review. Audiences are
// spec.audiences, or the server's when none are given; the answer's
// status.audiences are those the token is good for.
func (h *Handler) tokenReview(r *http.Request, rev *authenticationv1.TokenReview) (*authenticationv1.TokenReview, error) {
	if rev.Namespace != "" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("namespace is not allowed on this type: %v", rev.Namespace))
	}
	if rev.Spec.Token == "" {
		return nil, apierrors.NewBadRequest("token is required for TokenReview in authentication")
	}
	if h.authn == nil {
		return rev, nil
	}
	// The caller's context: cancelled when it goes, and no credential of
	// the caller's leaks into it (the request is a new one).
	fake, err := http.NewRequestWithContext(r.Context(), http.MethodGet, "/", http.NoBody)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	fake.Header.Set("Authorization", "Bearer "+rev.Spec.Token)
	auds := rev.Spec.Audiences
	if len(auds) == 0 {
		auds = h.audiences
	}
	if len(auds) > 0 {
		fake = fake.WithContext(authenticator.WithAudiences(fake.Context(), auds))
	}
	resp, ok, err := h.authn.AuthenticateRequest(fake)
	rev.Status.Authenticated = ok
	if err != nil {
		rev.Status.Error = err.Error()
	}
	if len(auds) > 0 && resp != nil && len(authenticator.Audiences(auds).Intersect(resp.Audiences)) == 0 {
		slog.Error("tokenreview: the authenticator accepted a token for none of the audiences asked", "want", auds, "got", resp.Audiences)
		return nil, badAudiences
	}
	if resp != nil && resp.User != nil {
		u := resp.User
		rev.Status.User = authenticationv1.UserInfo{
			Username: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups(),
			Extra: make(map[string]authenticationv1.ExtraValue, len(u.GetExtra())),
		}
		for k, v := range maps.All(u.GetExtra()) {
			rev.Status.User.Extra[k] = v
		}
		rev.Status.Audiences = resp.Audiences
	}
	return rev, nil
}
