package serviceaccount

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// postToken posts body to the token subresource of ns/name served by t.
func postToken(t *testing.T, tr *TokenRequest, ns, name, body string) *httptest.ResponseRecorder {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token", tr)
	r := httptest.NewRequest(http.MethodPost, "/api/v1/namespaces/"+ns+"/serviceaccounts/"+name+"/token", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, r)
	return w
}

func TestTokenRequestHandler(t *testing.T) {
	f := newFixture(t)
	tr := &TokenRequest{Issuer: f.issuer, Objects: f.objects, Audiences: []string{"https://kubernetes.default.svc"}, MaxExpiration: 2 * time.Hour}
	f.objects.secrets["ns/s"] = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s", UID: "s-1"}}

	for name, tc := range map[string]struct {
		sa, body string
		code     int
		check    func(t *testing.T, w *httptest.ResponseRecorder, out *authenticationv1.TokenRequest)
	}{
		"defaults": {sa: "robot", body: `{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest"}`, code: 201,
			check: func(t *testing.T, _ *httptest.ResponseRecorder, out *authenticationv1.TokenRequest) {
				if *out.Spec.ExpirationSeconds != 3600 || out.Spec.Audiences[0] != "https://kubernetes.default.svc" || out.Status.Token == "" || out.UID != "uid-1" {
					t.Errorf("%+v", out)
				}
				if _, ok, err := f.authn.AuthenticateToken(context.Background(), out.Status.Token); !ok || err != nil {
					t.Errorf("issued token refused: %v", err)
				}
			}},
		"shortened to the maximum": {sa: "robot", body: `{"spec":{"expirationSeconds":86400}}`, code: 201,
			check: func(t *testing.T, w *httptest.ResponseRecorder, out *authenticationv1.TokenRequest) {
				if *out.Spec.ExpirationSeconds != 7200 || !strings.Contains(w.Header().Get("Warning"), "shortened to 7200 seconds") {
					t.Errorf("%d, warning %q", *out.Spec.ExpirationSeconds, w.Header().Get("Warning"))
				}
			}},
		"bound to a Secret":  {sa: "robot", body: `{"spec":{"boundObjectRef":{"kind":"Secret","apiVersion":"v1","name":"s"}}}`, code: 201},
		"stale Secret UID":   {sa: "robot", body: `{"spec":{"boundObjectRef":{"kind":"Secret","apiVersion":"v1","name":"s","uid":"old"}}}`, code: 409},
		"bound to a Pod":     {sa: "robot", body: `{"spec":{"boundObjectRef":{"kind":"Pod","apiVersion":"v1","name":"p"}}}`, code: 400},
		"too short":          {sa: "robot", body: `{"spec":{"expirationSeconds":599}}`, code: 422},
		"another name":       {sa: "robot", body: `{"metadata":{"name":"other"}}`, code: 422},
		"another UID":        {sa: "robot", body: `{"metadata":{"uid":"uid-0"}}`, code: 409},
		"no ServiceAccount":  {sa: "nobody", body: `{}`, code: 404},
		"not a TokenRequest": {sa: "robot", body: `{"apiVersion":"v1","kind":"ConfigMap"}`, code: 400},
		"not JSON":           {sa: "robot", body: `{`, code: 400},
	} {
		t.Run(name, func(t *testing.T) {
			w := postToken(t, tr, "ns", tc.sa, tc.body)
			if w.Code != tc.code {
				t.Fatalf("code %d, want %d: %s", w.Code, tc.code, w.Body)
			}
			if tc.check != nil {
				var out authenticationv1.TokenRequest
				if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
					t.Fatal(err)
				}
				tc.check(t, w, &out)
			}
		})
	}
}
