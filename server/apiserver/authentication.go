package apiserver

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"strings"

	"github.com/apiloom/apiloom/server/endpoints/responsewriters"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/endpoints/filters"

	"github.com/apiloom/apiloom/server/authn"
)

// authentication is what the server needs to identify its clients.
type authentication struct {
	auth authenticator.Request
	// clientCAs verify client certificates: the server's own CA and
	// --client-ca-file's.
	clientCAs *x509.CertPool
	// admin is the client certificate of the kubeconfig written at start.
	admin *authn.ClientCert
	notes []string
	// apiAudiences are --api-audiences (default: the issuers); nil in
	// aggregated mode, where the host's authenticators decide.
	apiAudiences []string
	// tokens are the JWT and webhook authenticators (tokenauthn.go).
	tokens *tokenAuthn
	// serviceAccounts issues and checks ServiceAccount tokens
	// (serviceaccounts.go); nil in aggregated mode.
	serviceAccounts *serviceAccounts
}

// newAuthentication prepares the server's CA, the admin certificate and
// the authenticator for o's flags; token is the loopback token.
func newAuthentication(o *Options, token string) (*authentication, error) {
	admin, notes, err := loadOrCreateAdminCert(o)
	if err != nil {
		return nil, err
	}
	caPEM, err := os.ReadFile(o.path("pki", "ca.crt"))
	if err != nil {
		return nil, err
	}
	pool, err := authn.ClientCAs(caPEM, o.ClientCAFile)
	if err != nil {
		return nil, err
	}
	sa, err := newServiceAccounts(o)
	if err != nil {
		return nil, err
	}
	tokens, err := newTokenAuthn(o)
	if err != nil {
		return nil, err
	}
	// kube-apiserver's order: the token file, ServiceAccount tokens, JWT
	// issuers, the webhook.
	auth, err := authn.New(authn.Config{ClientCAs: pool, TokenAuthFile: o.TokenAuthFile, LoopbackToken: token, Anonymous: o.AnonymousAuth,
		Tokens: append([]authenticator.Token{sa.authn}, tokens.tokens...), APIAudiences: o.apiAudiences()})
	if err != nil {
		tokens.close()
		return nil, err
	}
	return &authentication{auth: auth, apiAudiences: o.apiAudiences(), clientCAs: pool, admin: admin, notes: notes, tokens: tokens, serviceAccounts: sa}, nil
}

// withAuthentication puts the request's user in its context
// (k8s.io/apiserver's filter, which also drops the Authorization header
// once used) and answers a request it cannot identify as kube-apiserver
// does: 401 with a Status that says only "Unauthorized". The health checks
// are served to anyone, for load balancers and kubelets. With audit on
// (aud), the requests it lets through are audited (withAudit) and so are
// its 401s, as in kube-apiserver's chain. apiAudiences (--api-audiences)
// are the audiences every request's credentials are checked for, as
// kube-apiserver puts them in each request's context: a token's cached
// answer is then shared by requests and TokenReviews that name none.
func withAuthentication(auth authenticator.Request, apiAudiences []string, aud *auditing, next http.Handler) http.Handler {
	next = aud.withAudit(next)
	unauthorized := aud.withFailedAuthentication(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		responsewriters.WriteError(w, r, apierrors.NewUnauthorized("Unauthorized"))
	}))
	failed := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isOpenPath(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		unauthorized.ServeHTTP(w, r)
	})
	return filters.WithAuthentication(next, auth, failed, apiAudiences, nil)
}

// isOpenPath: the health checks and their sub-paths (/readyz/etcd...).
func isOpenPath(path string) bool {
	for _, p := range healthPaths {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// servingTLSConfig asks clients for a certificate without requiring one
// (a token is as good a credential), as kube-apiserver does: the
// certificate is verified by the x509 authenticator, so a bad one gets a
// 401 rather than a failed handshake; clientCAs are announced to clients
// so that they pick the right certificate. TLS 1.2 at least.
func servingTLSConfig(cert tls.Certificate, clientCAs *x509.CertPool) *tls.Config {
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		NextProtos:   []string{"h2", "http/1.1"},
		MinVersion:   tls.VersionTLS12,
		ClientAuth:   tls.RequestClientCert,
		ClientCAs:    clientCAs,
	}
}
