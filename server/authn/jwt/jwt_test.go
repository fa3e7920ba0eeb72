package jwt

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/apis/apiserver"

	"github.com/apiloom/apiloom/server/authn/jwt/jwttest"
)

func mustDecode(t *testing.T, y string) *apiserver.AuthenticationConfiguration {
	t.Helper()
	c, err := Decode([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(c, nil); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestDecodeAndValidate(t *testing.T) {
	is := jwttest.New(t)
	c := mustDecode(t, is.ConfigYAML("apiloom", `  claimValidationRules:
  - expression: 'claims.email_verified == true'
    message: email not verified
  userValidationRules:
  - expression: "!user.username.startsWith('oidc:system:')"
    message: no system users
`))
	if len(c.JWT) != 1 || c.JWT[0].Issuer.URL != is.URL || c.JWT[0].ClaimMappings.Username.Claim != "email" {
		t.Fatalf("decoded %+v", c.JWT)
	}
	if len(c.JWT[0].ClaimValidationRules) != 1 || len(c.JWT[0].UserValidationRules) != 1 {
		t.Fatalf("rules: %+v", c.JWT[0])
	}
	// v1beta1 decodes too.
	beta := strings.Replace(is.ConfigYAML("apiloom", ""), "apiserver.config.k8s.io/v1", "apiserver.config.k8s.io/v1beta1", 1)
	mustDecode(t, beta)

	for name, tc := range map[string]struct{ yaml, want string }{
		"unknown field":     {is.ConfigYAML("apiloom", "  bogus: 1\n"), `unknown field "jwt[0].bogus"`},
		"plain http issuer": {strings.Replace(is.ConfigYAML("apiloom", ""), "https://", "http://", 1), "URL scheme must be https"},
		"bad CEL":           {is.ConfigYAML("apiloom", "  claimValidationRules:\n  - expression: 'claims.'\n"), "compilation failed"},
		"no audience":       {is.ConfigYAML("", ""), "issuer.audiences: Required value"},
		"empty":             {"", "empty config data"},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := Decode([]byte(tc.yaml))
			if err == nil {
				err = Validate(c, nil)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one containing %q", err, tc.want)
			}
		})
	}
	if err := Validate(mustDecode(t, is.ConfigYAML("apiloom", "")), []string{is.URL}); err == nil {
		t.Fatal("a ServiceAccount issuer's URL was accepted for a JWT authenticator")
	}
}

func TestFromFlags(t *testing.T) {
	for _, tc := range []struct {
		claim, prefix, want string
	}{
		{"sub", "", "https://idp#"},
		{"email", "", ""},
		{"sub", "-", ""},
		{"sub", "corp:", "corp:"},
	} {
		c, err := FromFlags(Flags{IssuerURL: "https://idp", ClientID: "k", UsernameClaim: tc.claim, UsernamePrefix: tc.prefix,
			GroupsClaim: "groups", GroupsPrefix: "g:", RequiredClaims: map[string]string{"hd": "example.com"}})
		if err != nil {
			t.Fatal(err)
		}
		j := c.JWT[0]
		if got := *j.ClaimMappings.Username.Prefix; got != tc.want {
			t.Errorf("claim %s prefix %q: username prefix %q, want %q", tc.claim, tc.prefix, got, tc.want)
		}
		if j.Issuer.Audiences[0] != "k" || *j.ClaimMappings.Groups.Prefix != "g:" || j.ClaimValidationRules[0].RequiredValue != "example.com" {
			t.Errorf("built %+v", j)
		}
		if err := Validate(c, nil); err != nil {
			t.Errorf("flags' config does not validate: %v", err)
		}
	}
}

// waitHealthy waits until every issuer of a has served its keys.
func waitHealthy(t testing.TB, a *Authenticator) {
	t.Helper()
	waitFor(t, "the issuers to be healthy", func() bool { return a.Healthy() == nil })
}

// waitFor polls cond until it holds, failing after 30s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 30*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("timed out waiting for %s", what)
	}
}

func newAuthenticator(t testing.TB, c *apiserver.AuthenticationConfiguration) *Authenticator {
	t.Helper()
	a, err := New(c, Options{OldGrace: time.Millisecond, HealthPoll: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	waitHealthy(t, a)
	return a
}

func TestAuthenticate(t *testing.T) {
	is := jwttest.New(t)
	a := newAuthenticator(t, mustDecode(t, is.ConfigYAML("apiloom", `  claimValidationRules:
  - expression: "has(claims.tenant) && claims.tenant == 'acme'"
    message: not a member of tenant acme
`)))
	ctx := context.Background()
	good := map[string]any{"aud": "apiloom", "sub": "1", "email": "ann@example.com", "tenant": "acme", "groups": []string{"dev", "ops"}}

	resp, ok, err := a.AuthenticateToken(ctx, is.Token(t, good))
	if err != nil || !ok {
		t.Fatalf("good token: ok %v err %v", ok, err)
	}
	if u := resp.User; u.GetName() != "oidc:ann@example.com" || strings.Join(u.GetGroups(), ",") != "oidc:dev,oidc:ops" {
		t.Fatalf("user %q %v", u.GetName(), u.GetGroups())
	}

	otherTenant := map[string]any{}
	for k, v := range good {
		otherTenant[k] = v
	}
	otherTenant["tenant"] = "umbrella"
	if _, ok, err := a.AuthenticateToken(ctx, is.Token(t, otherTenant)); ok || err == nil || !strings.Contains(err.Error(), "not a member of tenant acme") {
		t.Fatalf("claim rule: ok %v err %v", ok, err)
	}
	wrongAud := map[string]any{"aud": "elsewhere", "email": "ann@example.com", "tenant": "acme"}
	if _, ok, _ := a.AuthenticateToken(ctx, is.Token(t, wrongAud)); ok {
		t.Fatal("a token for another audience was accepted")
	}
	expired := map[string]any{"aud": "apiloom", "email": "ann@example.com", "tenant": "acme", "exp": time.Now().Add(-time.Minute).Unix()}
	if _, ok, _ := a.AuthenticateToken(ctx, is.Token(t, expired)); ok {
		t.Fatal("an expired token was accepted")
	}
	other := jwttest.New(t) // same claims, a key the configuration does not trust
	if _, ok, _ := a.AuthenticateToken(ctx, other.Token(t, map[string]any{"iss": is.URL, "aud": "apiloom", "email": "x@y", "tenant": "acme"})); ok {
		t.Fatal("a token signed by another key was accepted")
	}
}

func TestWatchReloads(t *testing.T) {
	is := jwttest.New(t)
	path := filepath.Join(t.TempDir(), "authn.yaml")
	write := func(y string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(y), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(is.ConfigYAML("first", ""))
	c, data, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	a := newAuthenticator(t, c)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.Watch(ctx, path, data, 10*time.Millisecond, 10*time.Second, slog.New(slog.NewTextHandler(io.Discard, nil)))
	}()
	t.Cleanup(func() { cancel(); <-done })

	accepted := func(aud string) bool {
		_, ok, _ := a.AuthenticateToken(context.Background(), is.Token(t, map[string]any{"aud": aud, "email": "ann@example.com"}))
		return ok
	}
	if !accepted("first") || accepted("second") {
		t.Fatal("before the reload: want first accepted, second refused")
	}
	// A file that does not validate is not loaded: the old one stays.
	write(is.ConfigYAML("", ""))
	write(is.ConfigYAML("second", ""))
	waitFor(t, "the changed file to be reloaded", func() bool { return accepted("second") })
	if accepted("first") {
		t.Fatal("after the reload the old audience is still accepted")
	}
}

// BenchmarkAuthenticateToken is the cost of one request's JWT check with
// the keys already fetched: signature, claims, CEL-free mappings.
func BenchmarkAuthenticateToken(b *testing.B) {
	is := jwttest.New(b)
	c, err := Decode([]byte(is.ConfigYAML("apiloom", "")))
	if err != nil {
		b.Fatal(err)
	}
	a := newAuthenticator(b, c)
	token := is.Token(b, map[string]any{"aud": "apiloom", "email": "ann@example.com", "groups": []string{"dev"}})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, ok, err := a.AuthenticateToken(ctx, token); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

// TestDocsExample: the configuration docs/token-authentication.md shows
// loads and validates.
func TestDocsExample(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/token-authentication.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```yaml\n")
	example, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("no yaml example in the doc")
	}
	c := mustDecode(t, example)
	j := c.JWT[0]
	if j.ClaimMappings.UID.Claim != "sub" || len(j.ClaimMappings.Extra) != 1 || len(j.ClaimValidationRules) != 1 || len(j.UserValidationRules) != 1 {
		t.Fatalf("decoded %+v", j)
	}
}
