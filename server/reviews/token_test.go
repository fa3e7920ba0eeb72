package reviews

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apiserver/pkg/authentication/authenticator"
)

// fakeAuthn answers a request by its bearer token: "good" is alice, good
// for the audiences asked ("good-elsewhere": for "elsewhere" only);
// anything else an error. It records the audiences asked.
type fakeAuthn struct{ asked []string }

func (f *fakeAuthn) AuthenticateRequest(r *http.Request) (*authenticator.Response, bool, error) {
	auds, _ := authenticator.AudiencesFrom(r.Context())
	f.asked = auds
	if len(r.Header) != 1 {
		return nil, false, errors.New("the request carries more than the token")
	}
	switch r.Header.Get("Authorization") {
	case "Bearer good":
		return &authenticator.Response{User: alice, Audiences: auds}, true, nil
	case "Bearer good-elsewhere":
		return &authenticator.Response{User: alice, Audiences: authenticator.Audiences{"elsewhere"}}, true, nil
	}
	return nil, false, errors.New("invalid bearer token")
}

func TestTokenReview(t *testing.T) {
	fa := &fakeAuthn{}
	h, err := New(Config{Authorizer: &fakeAuthorizer{}, RuleResolver: &fakeResolver{}, Authenticator: fa, APIAudiences: []string{"api"}})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Install(mux)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("Authorization", "Bearer the-callers-own") // must not reach the review
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	review := func(spec string) (int, authenticationv1.TokenReview, string) {
		code, body, _ := post(t, srv, "/apis/authentication.k8s.io/v1/tokenreviews", "application/json",
			`{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":`+spec+`}`)
		var rev authenticationv1.TokenReview
		_ = json.Unmarshal([]byte(body), &rev)
		return code, rev, body
	}

	code, rev, body := review(`{"token":"good"}`)
	if code != 201 || !rev.Status.Authenticated || rev.Status.User.Username != "alice" || rev.Status.User.Extra["scopes"][1] != "y" ||
		strings.Join(rev.Status.Audiences, ",") != "api" || strings.Join(fa.asked, ",") != "api" {
		t.Fatalf("good token: %d %s (asked for %v)", code, body, fa.asked)
	}
	code, rev, body = review(`{"token":"good","audiences":["vault","api"]}`)
	if code != 201 || strings.Join(fa.asked, ",") != "vault,api" || strings.Join(rev.Status.Audiences, ",") != "vault,api" {
		t.Fatalf("spec.audiences: %d %s (asked for %v)", code, body, fa.asked)
	}
	code, rev, body = review(`{"token":"bad"}`)
	if code != 201 || rev.Status.Authenticated || rev.Status.Error != "invalid bearer token" || rev.Status.User.Username != "" {
		t.Fatalf("bad token: %d %s", code, body)
	}
	// An authenticator that accepts a token for none of the audiences
	// asked is a bug: upstream's 500.
	if code, _, body = review(`{"token":"good-elsewhere"}`); code != 500 || !strings.Contains(body, "error validating audiences") {
		t.Fatalf("audiences not met: %d %s", code, body)
	}
	if code, _, body = review(`{"token":""}`); code != 400 || !strings.Contains(body, "token is required for TokenReview in authentication") {
		t.Fatalf("empty token: %d %s", code, body)
	}
}
