package apiserver

import (
	"net/http"

	"github.com/apiloom/apiloom/server/reviews"
)

// installReviews serves the review kinds kubectl auth can-i and whoami
// create (package server/reviews) on mux, answered by the authorizers
// every request passes.
func installReviews(mux *http.ServeMux, authz authorizers, maxBodyBytes int64) error {
	h, err := reviews.New(reviews.Config{Authorizer: authz, RuleResolver: authz.rules, MaxRequestBodyBytes: maxBodyBytes})
	if err != nil {
		return err
	}
	h.Install(mux)
	return nil
}
