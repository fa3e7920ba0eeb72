package apiserver

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// TestAuthenticationFlags: kube-apiserver's names and defaults, and its
// rules: --authentication-config excludes every --oidc-* flag, the
// issuer URL and client ID come together, the webhook speaks v1 or
// v1beta1.
func TestAuthenticationFlags(t *testing.T) {
	parse := func(args ...string) (*Options, error) {
		o := DefaultOptions()
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		o.AddFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return &o, o.Validate()
	}
	o, err := parse()
	if err != nil {
		t.Fatal(err)
	}
	tk := o.TokenAuthn
	if tk.WebhookVersion != "v1beta1" || tk.WebhookCacheTTL != 2*time.Minute || tk.OIDC.UsernameClaim != "sub" ||
		strings.Join(tk.OIDC.SigningAlgs, ",") != "RS256" {
		t.Fatalf("defaults differ from kube-apiserver's: %+v", tk)
	}
	o, err = parse("--oidc-issuer-url=https://idp", "--oidc-client-id=k", "--oidc-required-claim=hd=example.com",
		"--oidc-required-claim=team=a,b", "--oidc-signing-algs=ES256,RS256", "--authentication-token-webhook-config-file=hook.kubeconfig",
		"--authentication-token-webhook-version=v1", "--authentication-token-webhook-cache-ttl=30s", "--api-audiences=a,b")
	if err != nil {
		t.Fatal(err)
	}
	tk = o.TokenAuthn
	if tk.OIDC.RequiredClaims["team"] != "a,b" || len(tk.OIDC.SigningAlgs) != 2 || tk.WebhookCacheTTL != 30*time.Second || len(o.apiAudiences()) != 2 {
		t.Fatalf("parsed %+v", tk)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--authentication-config=a.yaml", "--oidc-username-claim=email"}, "authentication-config file and oidc-* flags are mutually exclusive"},
		{[]string{"--oidc-groups-claim=groups"}, "oidc-issuer-url and oidc-client-id must be specified together"},
		{[]string{"--oidc-issuer-url=https://idp"}, "oidc-issuer-url and oidc-client-id must be specified together"},
		{[]string{"--authentication-token-webhook-config-file=h", "--authentication-token-webhook-version=v2"}, `--authentication-token-webhook-version "v2"`},
	} {
		if _, err := parse(tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}
