package apiserver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/endpoints/request"

	"github.com/apiloom/apiloom/server/authn"
)

// seenUser is a handler that answers 200 with the user it was given.
var seenUser = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	u, ok := request.UserFrom(r.Context())
	if !ok {
		_, _ = w.Write([]byte("<none>"))
		return
	}
	if r.Header.Get("Authorization") != "" {
		http.Error(w, "the Authorization header reached the handler", http.StatusInternalServerError)
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"name": u.GetName(), "groups": u.GetGroups()})
})

// TestBearerToken: the scheme is matched in any case, as kube-apiserver
// matches it ("bearer" from some clients got 401); anything else that is
// not exactly the token is refused.
func TestBearerToken(t *testing.T) {
	auth, err := authn.New(authn.Config{LoopbackToken: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	h := withAuthentication(auth, nil, nil, seenUser)
	for header, want := range map[string]int{
		"Bearer s3cret":       http.StatusOK,
		"bearer s3cret":       http.StatusOK,
		"BEARER s3cret":       http.StatusOK,
		"  Bearer s3cret  ":   http.StatusOK,
		"Bearer s3cret extra": http.StatusOK,
		"Bearer  s3cret":      http.StatusUnauthorized, // an empty token, then more
		"Bearer s3cre":        http.StatusUnauthorized,
		"Bearer s3cretx":      http.StatusUnauthorized,
		"Basic s3cret":        http.StatusUnauthorized,
		"s3cret":              http.StatusUnauthorized,
		"":                    http.StatusUnauthorized,
		"Bearer":              http.StatusUnauthorized,
		"Bearers3cret":        http.StatusUnauthorized,
		"Bearer\ts3cret":      http.StatusUnauthorized,
	} {
		r := httptest.NewRequest("GET", "/apis/x", nil)
		r.Header.Set("Authorization", header)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != want {
			t.Errorf("Authorization %q: %d, want %d", header, w.Code, want)
		}
	}
}

// TestAuthenticationStage: the user the authenticator found is in the
// request's context (the loopback token is system:apiserver in
// system:masters and system:authenticated), the credential is not passed
// on; without credentials, or with bad ones, the answer is kube-apiserver's
// 401 Status, which says nothing more than "Unauthorized"; the health
// checks are served to anyone.
func TestAuthenticationStage(t *testing.T) {
	auth, err := authn.New(authn.Config{LoopbackToken: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	h := withAuthentication(auth, nil, nil, seenUser)
	for _, tc := range []struct {
		path, auth string
		code       int
		body       string
	}{
		{"/apis", "Bearer s3cret", http.StatusOK, `{"groups":["system:masters","system:authenticated"],"name":"system:apiserver"}` + "\n"},
		{"/healthz", "Bearer s3cret", http.StatusOK, `{"groups":["system:masters","system:authenticated"],"name":"system:apiserver"}` + "\n"},
		{"/apis", "Bearer wrong", http.StatusUnauthorized, ""},
		{"/apis", "", http.StatusUnauthorized, ""},
		{"/metrics", "", http.StatusUnauthorized, ""},
		{"/healthzx", "", http.StatusUnauthorized, ""},
		{"/readyz", "", http.StatusOK, "<none>"},
		{"/livez", "Bearer wrong", http.StatusOK, "<none>"},
		{"/readyz/etcd", "", http.StatusOK, "<none>"},
	} {
		r := httptest.NewRequest("GET", tc.path, nil)
		if tc.auth != "" {
			r.Header.Set("Authorization", tc.auth)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tc.code {
			t.Errorf("%s with %q: %d, want %d", tc.path, tc.auth, w.Code, tc.code)
			continue
		}
		if tc.code != http.StatusUnauthorized {
			if w.Body.String() != tc.body {
				t.Errorf("%s with %q: body %q, want %q", tc.path, tc.auth, w.Body.String(), tc.body)
			}
			continue
		}
		var st metav1.Status
		if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil {
			t.Fatalf("401 body %q: %v", w.Body.String(), err)
		}
		want := metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
			Message: "Unauthorized", Reason: metav1.StatusReasonUnauthorized, Code: http.StatusUnauthorized}
		if st.Kind != want.Kind || st.APIVersion != want.APIVersion || st.Status != want.Status || st.Message != want.Message ||
			st.Reason != want.Reason || st.Code != want.Code || st.Details != nil {
			t.Errorf("%s with %q: 401 body %s, want upstream's", tc.path, tc.auth, w.Body.String())
		}
	}
}
