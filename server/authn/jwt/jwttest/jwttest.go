// Package jwttest is an OIDC issuer for tests: an HTTPS server publishing
// its discovery document and JWKS, and RS256 tokens signed with its key,
// made with the standard library only, as any other issuer would.
package jwttest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Issuer is a running test issuer; Close is registered with the test.
type Issuer struct {
	URL   string // https://127.0.0.1:port
	CAPEM string // the certificate to trust for URL
	key   *rsa.PrivateKey
	kid   string
	// JWKSFetches counts the key set's fetches.
	JWKSFetches atomic.Int64
}

// New starts an issuer for t.
func New(t testing.TB) *Issuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	is := &Issuer{key: key, kid: "test-key"}
	mux := http.NewServeMux()
	srv := httptest.NewUnstartedServer(mux)
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{
			"issuer": is.URL, "jwks_uri": is.URL + "/jwks",
			"response_types_supported": []string{"id_token"}, "subject_types_supported": []string{"public"},
			"id_token_signing_alg_values_supported": []string{"RS256"},
		})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		is.JWKSFetches.Add(1)
		writeJSON(w, map[string]any{"keys": []map[string]string{{
			"kty": "RSA", "use": "sig", "alg": "RS256", "kid": is.kid,
			"n": b64(key.N.Bytes()), "e": b64(big.NewInt(int64(key.E)).Bytes()),
		}}})
	})
	srv.StartTLS()
	t.Cleanup(srv.Close)
	is.URL = srv.URL
	is.CAPEM = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	return is
}

// Token signs claims (RS256). Claims the caller leaves out get defaults:
// iss the issuer, iat now, exp in an hour.
func (is *Issuer) Token(t testing.TB, claims map[string]any) string {
	t.Helper()
	c := map[string]any{"iss": is.URL, "iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix()}
	for k, v := range claims {
		c[k] = v
	}
	header, err := json.Marshal(map[string]string{"alg": "RS256", "typ": "JWT", "kid": is.kid})
	if err != nil {
		t.Fatal(err)
	}
	payload, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	signing := b64(header) + "." + b64(payload)
	sum := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, is.key, crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return signing + "." + b64(sig)
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// ConfigYAML is an AuthenticationConfiguration trusting is for audience
// aud: username from the email claim and groups from the groups claim,
// both prefixed "oidc:", then extra (YAML at the jwt entry's
// indentation: rules, more mappings).
func (is *Issuer) ConfigYAML(aud, extra string) string {
	ca := "      " + strings.ReplaceAll(strings.TrimSpace(is.CAPEM), "\n", "\n      ")
	return fmt.Sprintf(`apiVersion: apiserver.config.k8s.io/v1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: %s
    audiences: [%s]
    certificateAuthority: |
%s
  claimMappings:
    username: {claim: email, prefix: "oidc:"}
    groups: {claim: groups, prefix: "oidc:"}
%s`, is.URL, aud, ca, extra)
}
