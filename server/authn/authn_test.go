package authn

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/authentication/authenticator"
)

// testCA is a CA made for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t testing.TB, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// request returns a request presenting the client certificate of user in
// groups signed by ca (none when ca is nil) and the given Authorization.
func (ca *testCA) request(t testing.TB, userName string, groups []string, authorization string) *http.Request {
	t.Helper()
	r := httptest.NewRequest("GET", "/apis", nil)
	if ca != nil {
		c, err := NewClientCert(ca.cert, ca.key, userName, groups, time.Now(), time.Now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		pair, err := tls.X509KeyPair(c.CertPEM, c.KeyPEM)
		if err != nil {
			t.Fatal(err)
		}
		leaf, _ := x509.ParseCertificate(pair.Certificate[0])
		r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{leaf}}
	}
	if authorization != "" {
		r.Header.Set("Authorization", authorization)
	}
	return r
}

// outcome is what the authenticator made of a request.
type outcome struct {
	user   string
	groups []string
	err    bool
}

func authenticate(t *testing.T, a authenticator.Request, r *http.Request) outcome {
	t.Helper()
	resp, ok, err := a.AuthenticateRequest(r)
	switch {
	case err != nil:
		return outcome{err: true}
	case !ok:
		return outcome{}
	}
	return outcome{user: resp.User.GetName(), groups: resp.User.GetGroups()}
}

func writeTokenFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAuthenticators: each credential is read by its own authenticator,
// as kube-apiserver reads it, and every identified user but the anonymous
// one is in system:authenticated.
func TestAuthenticators(t *testing.T) {
	own, extra, stranger := newTestCA(t, "own"), newTestCA(t, "extra"), newTestCA(t, "stranger")
	pool, err := ClientCAs(own.pem, writeFile(t, "ca.crt", extra.pem))
	if err != nil {
		t.Fatal(err)
	}
	tokens := writeTokenFile(t, "tok-bob,bob,1001\ntok-carol,carol,1002,\"dev,ops\"\n")
	for _, anon := range []bool{false, true} {
		a, err := New(Config{ClientCAs: pool, TokenAuthFile: tokens, LoopbackToken: "loop", Anonymous: anon})
		if err != nil {
			t.Fatal(err)
		}
		none := outcome{}
		if anon {
			none = outcome{user: "system:anonymous", groups: []string{"system:unauthenticated"}}
		}
		for _, tc := range []struct {
			name string
			r    *http.Request
			want outcome
		}{
			{"own CA", own.request(t, "alice", []string{"dev"}, ""), outcome{user: "alice", groups: []string{"dev", "system:authenticated"}}},
			{"client CA file", extra.request(t, "dave", nil, ""), outcome{user: "dave", groups: []string{"system:authenticated"}}},
			{"unknown CA", stranger.request(t, "mallory", []string{"system:masters"}, ""), outcome{err: true}},
			{"loopback", (*testCA)(nil).request(t, "", nil, "Bearer loop"), outcome{user: "system:apiserver", groups: []string{"system:masters", "system:authenticated"}}},
			{"token file", (*testCA)(nil).request(t, "", nil, "Bearer tok-bob"), outcome{user: "bob", groups: []string{"system:authenticated"}}},
			{"token file groups", (*testCA)(nil).request(t, "", nil, "bearer tok-carol"), outcome{user: "carol", groups: []string{"dev", "ops", "system:authenticated"}}},
			{"bad token", (*testCA)(nil).request(t, "", nil, "Bearer nope"), outcome{err: true}},
			{"basic auth", (*testCA)(nil).request(t, "", nil, "Basic Ym9iOnB3"), none},
			{"nothing", (*testCA)(nil).request(t, "", nil, ""), none},
			// A certificate is tried before a token, as upstream's union.
			{"cert and token", own.request(t, "alice", nil, "Bearer loop"), outcome{user: "alice", groups: []string{"system:authenticated"}}},
		} {
			if got := authenticate(t, a, tc.r); got.user != tc.want.user || got.err != tc.want.err || !slices.Equal(got.groups, tc.want.groups) {
				t.Errorf("anonymous=%v %s: got %+v, want %+v", anon, tc.name, got, tc.want)
			}
		}
	}
}

// TestNoCredentialAccepted: with nothing configured every request is
// unauthenticated, none an error.
func TestNoCredentialAccepted(t *testing.T) {
	a, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if got := authenticate(t, a, (*testCA)(nil).request(t, "", nil, "Bearer x")); got.user != "" {
		t.Fatalf("got %+v", got)
	}
}

// TestTokenFileErrors: a token file that cannot be read or has too few
// columns stops the server from starting, without the token in the error.
func TestTokenFileErrors(t *testing.T) {
	if _, err := New(Config{TokenAuthFile: filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Error("missing token file accepted")
	}
	_, err := New(Config{TokenAuthFile: writeTokenFile(t, "s3cret-canary,bob\n")})
	if err == nil {
		t.Fatal("two-column token file accepted")
	}
	if strings.Contains(err.Error(), "s3cret-canary") {
		t.Errorf("error shows the token: %v", err)
	}
}

// TestClientCAs: the server's CA alone, a file alone, both; a file with no
// certificate in it is an error.
func TestClientCAs(t *testing.T) {
	own := newTestCA(t, "own")
	if _, err := ClientCAs(nil, ""); !errors.Is(err, ErrNoClientCA) {
		t.Errorf("no CA: %v", err)
	}
	if _, err := ClientCAs(own.pem, ""); err != nil {
		t.Error(err)
	}
	if _, err := ClientCAs(nil, writeFile(t, "ca.crt", own.pem)); err != nil {
		t.Error(err)
	}
	if _, err := ClientCAs(own.pem, writeFile(t, "ca.crt", []byte("not pem"))); err == nil {
		t.Error("a --client-ca-file without certificates accepted")
	}
}

// TestClientCertNeedsCA: only a CA signs, and no certificate outlives it.
func TestClientCertNeedsCA(t *testing.T) {
	ca := newTestCA(t, "ca")
	c, err := NewClientCert(ca.cert, ca.key, "alice", []string{"dev"}, time.Now(), time.Now().AddDate(5, 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(c.CertPEM)
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if leaf.NotAfter.After(ca.cert.NotAfter) || leaf.Subject.CommonName != "alice" || !slices.Equal(leaf.Subject.Organization, []string{"dev"}) {
		t.Errorf("certificate %v until %v", leaf.Subject, leaf.NotAfter)
	}
	leafAsCA := *leaf
	if _, err := NewClientCert(&leafAsCA, ca.key, "bob", nil, time.Now(), time.Now().Add(time.Hour)); !errors.Is(err, ErrBadCA) {
		t.Errorf("a leaf signed: %v", err)
	}
	if _, err := NewClientCert(ca.cert, ca.key, "", nil, time.Now(), time.Now().Add(time.Hour)); err == nil {
		t.Error("a certificate without a user")
	}
}

func writeFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
