package authn

import (
	"context"
	"crypto/x509"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/utils/ptr"

	"github.com/apiloom/apiloom/server/authn/jwt"
	"github.com/apiloom/apiloom/server/authn/jwt/jwttest"
)

// BenchmarkChain is one request's authentication through the server's
// whole chain (New: client certificates, the token file, a JWT issuer),
// per credential type. The JWT is checked on every request (signature,
// claims, mappings): kube-apiserver caches token answers for 10s
// (--token-success-cache-ttl) in front of the chain, apiloom does not.
func BenchmarkChain(b *testing.B) {
	ca := newTestCA(b, "ca")
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	tokens := filepath.Join(b.TempDir(), "tokens.csv")
	if err := os.WriteFile(tokens, []byte("carol-token,carol,1003,\"qa,ops\"\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	is := jwttest.New(b)
	j, err := jwt.New(&apiserver.AuthenticationConfiguration{JWT: []apiserver.JWTAuthenticator{{
		Issuer: apiserver.Issuer{URL: is.URL, Audiences: []string{"apiloom"}, CertificateAuthority: is.CAPEM},
		ClaimMappings: apiserver.ClaimMappings{
			Username: apiserver.PrefixedClaimOrExpression{Claim: "email", Prefix: ptr.To("oidc:")},
			Groups:   apiserver.PrefixedClaimOrExpression{Claim: "groups", Prefix: ptr.To("oidc:")},
		},
	}}}, jwt.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(j.Close)
	if err := wait.PollUntilContextTimeout(b.Context(), 10*time.Millisecond, 30*time.Second, true,
		func(context.Context) (bool, error) { return j.Healthy() == nil, nil }); err != nil {
		b.Fatal(j.Healthy())
	}
	a, err := New(Config{ClientCAs: pool, TokenAuthFile: tokens, Tokens: []authenticator.Token{j}})
	if err != nil {
		b.Fatal(err)
	}
	oidcToken := is.Token(b, map[string]any{"aud": "apiloom", "email": "ann@example.com", "groups": []string{"dev"}})
	var noCA *testCA
	for _, bc := range []struct {
		name   string
		r      *http.Request
		bearer string
	}{
		{"certificate", ca.request(b, "alice", []string{"dev"}, ""), ""},
		{"tokenfile", noCA.request(b, "", nil, ""), "carol-token"},
		{"oidc", noCA.request(b, "", nil, ""), oidcToken},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				// The bearer-token authenticator removes the header it
				// used, as upstream's: it is set again each time (one
				// allocation of the benchmark's, not the server's).
				if bc.bearer != "" {
					bc.r.Header.Set("Authorization", "Bearer "+bc.bearer)
				}
				if _, ok, err := a.AuthenticateRequest(bc.r); !ok || err != nil {
					b.Fatal(ok, err)
				}
			}
		})
	}
}
