package apiserver

import (
	"net/http"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/endpoints/request"

	"github.com/apiloom/apiloom/server/reviews"
)

// installReviews serves the review kinds kubectl auth can-i and whoami
// create (package server/reviews) on mux.
//
// Until the server has an authentication stage and an authorizer chain,
// every request that passes withBearerToken carries the admin token, whose
// user is the loopback identity (system:apiserver in system:masters), and
// that user may do everything: the reviews are answered by kube-apiserver's
// AlwaysAllow authorizer and rule resolver, and a request without a user in
// its context is taken to be the loopback user's.
func installReviews(mux *http.ServeMux, maxBodyBytes int64) error {
	allow := authorizerfactory.NewAlwaysAllowAuthorizer()
	h, err := reviews.New(reviews.Config{Authorizer: allow, RuleResolver: allow, MaxRequestBodyBytes: maxBodyBytes})
	if err != nil {
		return err
	}
	h.Install(defaultUserMux{mux: mux, user: loopbackUser})
	return nil
}

// loopbackUser is who the admin token authenticates as.
var loopbackUser = &user.DefaultInfo{Name: "system:apiserver", Groups: []string{user.SystemPrivilegedGroup, user.AllAuthenticated}}

// defaultUserMux registers handlers that see u as the request's user when
// the request carries none.
type defaultUserMux struct {
	mux  *http.ServeMux
	user user.Info
}

func (d defaultUserMux) Handle(pattern string, h http.Handler) {
	d.mux.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := request.UserFrom(r.Context()); !ok {
			r = r.WithContext(request.WithUser(r.Context(), d.user))
		}
		h.ServeHTTP(w, r)
	}))
}
