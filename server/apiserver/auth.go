package apiserver

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"

	"github.com/apiloom/apiloom/server/endpoints"
)

// loadOrCreateToken returns the admin bearer token kept in dataDir, creating
// it on first start so that a restarted server keeps its kubeconfig valid.
func loadOrCreateToken(o *Options) (string, error) {
	path := o.path("admin-token")
	if b, err := os.ReadFile(path); err == nil {
		if tok := strings.TrimSpace(string(b)); tok != "" {
			return tok, nil
		}
	}
	buf := make([]byte, 32)
	if _, err := rand.Read(buf); err != nil {
		return "", err
	}
	tok := hex.EncodeToString(buf)
	if err := os.WriteFile(path, []byte(tok+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write admin token: %w", err)
	}
	return tok, nil
}

// unauthenticatedPaths are served without a token, as kube-apiserver serves
// its health checks to load balancers.
var unauthenticatedPaths = map[string]bool{"/healthz": true, "/livez": true, "/readyz": true}

// withBearerToken admits requests carrying the admin token and answers
// everything else with a 401 Status.
func withBearerToken(token string, next http.Handler) http.Handler {
	want := []byte(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := bearerToken(r.Header.Get("Authorization"))
		if ok && subtle.ConstantTimeCompare([]byte(got), want) == 1 {
			next.ServeHTTP(w, r.WithContext(request.WithUser(r.Context(), loopbackUser)))
			return
		}
		if unauthenticatedPaths[r.URL.Path] {
			next.ServeHTTP(w, r)
			return
		}
		endpoints.WriteError(w, apierrors.NewUnauthorized("Unauthorized"))
	})
}

// loopbackUser is who the admin token authenticates: the server's own
// loopback identity, allowed everything through system:masters.
var loopbackUser = &user.DefaultInfo{Name: user.APIServerUser, Groups: []string{user.SystemPrivilegedGroup, user.AllAuthenticated}}

// bearerToken reads the token of an Authorization header as kube-apiserver
// does: the scheme in any case ("bearer" too), the token up to the next
// space, an empty token being none.
func bearerToken(header string) (string, bool) {
	parts := strings.SplitN(strings.TrimSpace(header), " ", 3)
	if len(parts) < 2 || !strings.EqualFold(parts[0], "bearer") || parts[1] == "" {
		return "", false
	}
	return parts[1], true
}
