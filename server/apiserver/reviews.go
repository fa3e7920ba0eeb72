package apiserver

import (
	"net/http"

	"k8s.io/apiserver/pkg/authentication/authenticator"

	"github.com/apiloom/apiloom/server/reviews"
)

// installReviews serves the review kinds kubectl auth can-i and whoami
// create (package server/reviews) on mux, answered by the authorizers
// every request passes, and TokenReview, answered by the request
// authenticator auth with the server's audiences.
func installReviews(mux *http.ServeMux, authz authorizers, auth authenticator.Request, audiences []string, maxBodyBytes int64) error {
	h, err := reviews.New(reviews.Config{Authorizer: authz, RuleResolver: authz.rules, MaxRequestBodyBytes: maxBodyBytes,
		Authenticator: auth, APIAudiences: audiences})
	if err != nil {
		return err
	}
	h.Install(mux)
	return nil
}
