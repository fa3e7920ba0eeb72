package apiserver

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// The authorization flags are checked as kube-apiserver checks them, with
// its messages: --authorization-config excludes the mode and webhook
// flags, Webhook needs its kubeconfig and the kubeconfig its mode.
func TestValidateAuthorizationFlags(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "authz.yaml")
	if err := os.WriteFile(config, []byte("apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n- {type: RBAC, name: rbac}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n- {type: RBAC, name: roles}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string // "" for valid
	}{
		{nil, ""},
		{[]string{"--authorization-config=" + config}, ""},
		{[]string{"--authorization-mode=RBAC,Webhook", "--authorization-webhook-config-file=/k"}, ""},
		{[]string{"--authorization-mode=AlwaysDeny"}, ""},
		{[]string{"--authorization-config=" + config, "--authorization-mode=RBAC"},
			"--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined"},
		{[]string{"--authorization-config=" + config, "--authorization-webhook-cache-authorized-ttl=1m"},
			"--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined"},
		{[]string{"--authorization-config=" + bad}, "expected name rbac for authorizer RBAC instead of roles"},
		{[]string{"--authorization-config=" + filepath.Join(dir, "missing.yaml")}, "no such file"},
		{[]string{"--authorization-mode=Webhook"}, "authorization-mode Webhook's authorization config file not passed"},
		{[]string{"--authorization-webhook-config-file=/k"}, "cannot specify --authorization-webhook-config-file without mode Webhook"},
		{[]string{"--authorization-mode=Webhook", "--authorization-webhook-config-file=/k", "--authorization-webhook-version=v2"}, `"v2" is neither v1 nor v1beta1`},
		{[]string{"--authorization-mode=ABAC"}, `"ABAC" is not one of`},
	} {
		o := DefaultOptions()
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		o.AddFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		err := errors.Join(o.validateAuthorization()...)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}
}

// A TTL given sets the webhook's and, for aggregated mode, the delegating
// authorizer's.
func TestWebhookTTLFlagsSetBoth(t *testing.T) {
	o := DefaultOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse([]string{"--authorization-webhook-cache-authorized-ttl=2m", "--authorization-webhook-cache-unauthorized-ttl=3s"}); err != nil {
		t.Fatal(err)
	}
	w, d := o.AuthorizationConfig.Webhook, o.Delegation.Authorization
	if w.AuthorizedTTL.String() != "2m0s" || d.AllowCacheTTL.String() != "2m0s" || w.UnauthorizedTTL.String() != "3s" || d.DenyCacheTTL.String() != "3s" {
		t.Fatalf("webhook %v/%v, delegating %v/%v", w.AuthorizedTTL, w.UnauthorizedTTL, d.AllowCacheTTL, d.DenyCacheTTL)
	}
}
