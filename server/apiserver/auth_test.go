package apiserver

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestBearerToken: the scheme is matched in any case, as kube-apiserver
// matches it ("bearer" from some clients got 401); anything else that is
// not exactly the token is refused.
func TestBearerToken(t *testing.T) {
	h := withBearerToken("s3cret", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
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
