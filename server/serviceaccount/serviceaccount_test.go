package serviceaccount

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"path/filepath"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/authenticator"
)

// fakeObjects is a map of stored objects.
type fakeObjects struct {
	sas     map[string]*corev1.ServiceAccount
	secrets map[string]*corev1.Secret
}

func (f *fakeObjects) ServiceAccount(_ context.Context, ns, name string) (*corev1.ServiceAccount, error) {
	if sa, ok := f.sas[ns+"/"+name]; ok {
		return sa, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "serviceaccounts"}, name)
}

func (f *fakeObjects) Secret(_ context.Context, ns, name string) (*corev1.Secret, error) {
	if s, ok := f.secrets[ns+"/"+name]; ok {
		return s, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
}

type fixture struct {
	keys    *Keys
	issuer  *Issuer
	authn   *Authenticator
	objects *fakeObjects
	sa      *corev1.ServiceAccount
}

func newFixture(t testing.TB) *fixture {
	key, err := LoadOrCreateSigningKey(filepath.Join(t.TempDir(), "pki", "sa.key"))
	if err != nil {
		t.Fatal(err)
	}
	keys, err := NewKeys(key, nil)
	if err != nil {
		t.Fatal(err)
	}
	iss, err := NewIssuer("https://kubernetes.default.svc", keys)
	if err != nil {
		t.Fatal(err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "robot", UID: "uid-1"}}
	objs := &fakeObjects{sas: map[string]*corev1.ServiceAccount{"ns/robot": sa}, secrets: map[string]*corev1.Secret{}}
	a := NewAuthenticator([]string{"https://kubernetes.default.svc", "https://old.example"}, keys, []string{"https://kubernetes.default.svc"})
	a.SetObjects(objs)
	return &fixture{keys: keys, issuer: iss, authn: a, objects: objs, sa: sa}
}

func TestTokenAuthenticates(t *testing.T) {
	f := newFixture(t)
	tok, _, err := f.issuer.Token(f.sa, nil, []string{"https://kubernetes.default.svc"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	resp, ok, err := f.authn.AuthenticateToken(context.Background(), tok)
	if err != nil || !ok {
		t.Fatalf("AuthenticateToken: ok=%v err=%v", ok, err)
	}
	u := resp.User
	if u.GetName() != "system:serviceaccount:ns:robot" || u.GetUID() != "uid-1" {
		t.Errorf("user %q uid %q", u.GetName(), u.GetUID())
	}
	if g := strings.Join(u.GetGroups(), ","); g != "system:serviceaccounts,system:serviceaccounts:ns" {
		t.Errorf("groups %s", g)
	}
	if id := u.GetExtra()["authentication.kubernetes.io/credential-id"]; len(id) != 1 || !strings.HasPrefix(id[0], "JTI=") {
		t.Errorf("credential id %v", id)
	}
}

func TestTokenRefused(t *testing.T) {
	f := newFixture(t)
	good, _, err := f.issuer.Token(f.sa, nil, []string{"https://kubernetes.default.svc"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	other := newFixture(t)
	forged, _, _ := other.issuer.Token(f.sa, nil, []string{"https://kubernetes.default.svc"}, time.Hour)
	wrongAud, _, _ := f.issuer.Token(f.sa, nil, []string{"vault"}, time.Hour)
	past := *f.issuer
	past.now = func() time.Time { return time.Now().Add(-2 * time.Hour) }
	expired, _, _ := past.Token(f.sa, nil, nil, time.Hour)

	for name, tc := range map[string]struct {
		token   string
		mine    bool
		prepare func()
	}{
		"not a JWT":      {token: "abc"},
		"other key":      {token: forged, mine: true},
		"wrong audience": {token: wrongAud, mine: true},
		"expired":        {token: expired, mine: true},
		"deleted":        {token: good, mine: true, prepare: func() { delete(f.objects.sas, "ns/robot") }},
		"recreated (new UID)": {token: good, mine: true, prepare: func() {
			f.objects.sas["ns/robot"] = &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{UID: "uid-2"}}
		}},
	} {
		t.Run(name, func(t *testing.T) {
			f.objects.sas["ns/robot"] = f.sa
			if tc.prepare != nil {
				tc.prepare()
			}
			_, ok, err := f.authn.AuthenticateToken(context.Background(), tc.token)
			if ok {
				t.Fatal("authenticated")
			}
			if tc.mine != (err != nil) {
				t.Errorf("err = %v, want an error: %v", err, tc.mine)
			}
		})
	}
}

func TestAudienceFromRequest(t *testing.T) {
	f := newFixture(t)
	tok, _, _ := f.issuer.Token(f.sa, nil, []string{"vault"}, time.Hour)
	ctx := authenticator.WithAudiences(context.Background(), authenticator.Audiences{"vault"})
	if resp, ok, err := f.authn.AuthenticateToken(ctx, tok); !ok || err != nil || resp.Audiences[0] != "vault" {
		t.Fatalf("ok=%v err=%v", ok, err)
	}
}

func TestBoundSecret(t *testing.T) {
	f := newFixture(t)
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s", UID: "s-1"}}
	f.objects.secrets["ns/s"] = s
	tok, _, _ := f.issuer.Token(f.sa, s, nil, time.Hour)
	if _, ok, err := f.authn.AuthenticateToken(context.Background(), tok); !ok || err != nil {
		t.Fatalf("bound token refused: %v", err)
	}
	delete(f.objects.secrets, "ns/s")
	if _, ok, err := f.authn.AuthenticateToken(context.Background(), tok); ok || err == nil {
		t.Fatal("a token bound to a deleted Secret authenticated")
	}
}

func TestNotMineBeforeStorage(t *testing.T) {
	f := newFixture(t)
	tok, _, _ := f.issuer.Token(f.sa, nil, nil, time.Hour)
	a := NewAuthenticator([]string{"https://kubernetes.default.svc"}, f.keys, nil)
	if _, ok, err := a.AuthenticateToken(context.Background(), tok); ok || err != nil {
		t.Fatalf("ok=%v err=%v before SetObjects", ok, err)
	}
}

// TestExtraKeyVerifies: a token signed by another key listed as a
// --service-account-key-file verifies; the JWKS publishes both.
func TestExtraKeyVerifies(t *testing.T) {
	f := newFixture(t)
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	oldKeys, _ := NewKeys(ec, nil)
	oldIssuer, _ := NewIssuer("https://old.example", oldKeys)
	tok, _, _ := oldIssuer.Token(f.sa, nil, []string{"https://kubernetes.default.svc"}, time.Hour)
	keys, err := NewKeys(f.keys.signer, []crypto.PublicKey{ec.Public()})
	if err != nil {
		t.Fatal(err)
	}
	a := NewAuthenticator([]string{"https://kubernetes.default.svc", "https://old.example"}, keys, []string{"https://kubernetes.default.svc"})
	a.SetObjects(f.objects)
	if _, ok, err := a.AuthenticateToken(context.Background(), tok); !ok || err != nil {
		t.Fatalf("ok=%v err=%v", ok, err)
	}
	set := keys.JWKS()
	if len(set.Keys) != 2 {
		t.Fatalf("JWKS has %d keys", len(set.Keys))
	}
	// A standard library verifies the token with the published set.
	parsed, err := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatal(err)
	}
	var c jwt.Claims
	if err := parsed.Claims(set.Key(parsed.Headers[0].KeyID)[0].Key, &c); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkAuthenticate is the cost of authenticating one request's
// ServiceAccount token (signature, claims, the ServiceAccount read).
func BenchmarkAuthenticate(b *testing.B) {
	f := newFixture(b)
	tok, _, _ := f.issuer.Token(f.sa, nil, []string{"https://kubernetes.default.svc"}, time.Hour)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, ok, err := f.authn.AuthenticateToken(ctx, tok); !ok || err != nil {
			b.Fatal(err)
		}
	}
}
