package apiserver

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticator"

	"github.com/apiloom/apiloom/server/authn/jwt"
	"github.com/apiloom/apiloom/server/authn/tokenwebhook"
)

// authenticationConfigUpdateTimeout is how long a reloaded
// --authentication-config's issuers get to serve their keys before the
// reload is given up (and retried at the next look), kube-apiserver's
// UpdateAuthenticationConfigTimeout.
const authenticationConfigUpdateTimeout = time.Minute

// tokenAuthn are the JWT and webhook token authenticators of the flags,
// in kube-apiserver's order (after the token file and ServiceAccount
// tokens): JWT issuers, then the webhook.
type tokenAuthn struct {
	tokens []authenticator.Token
	jwt    *jwt.Authenticator // nil without JWT issuers
	// configFile and loaded are the --authentication-config watched and
	// the content jwt was built from ("" and nil for --oidc-* flags).
	configFile string
	loaded     []byte
	interval   time.Duration
}

// newTokenAuthn builds them; a configuration file that does not load or
// validate fails the start, as kube-apiserver's.
func newTokenAuthn(o *Options) (*tokenAuthn, error) {
	t := &o.TokenAuthn
	out := &tokenAuthn{interval: t.AuthenticationConfigReloadInterval}
	var cfg *apiserver.AuthenticationConfiguration
	var algs []string // nil: every algorithm k8s.io/apiserver knows
	switch {
	case t.AuthenticationConfigFile != "":
		c, data, err := jwt.Load(t.AuthenticationConfigFile)
		if err == nil {
			err = jwt.Validate(c, nil)
		}
		if err == nil {
			err = jwt.ForbidAnonymous(c)
		}
		if err != nil {
			return nil, fmt.Errorf("--authentication-config: %w", err)
		}
		// Every algorithm: a key decides, as kube-apiserver with
		// --authentication-config.
		cfg = c
		out.configFile, out.loaded = t.AuthenticationConfigFile, data
	case t.OIDC.IssuerURL != "" && t.OIDC.ClientID != "":
		c, err := jwt.FromFlags(t.OIDC)
		if err != nil {
			return nil, err
		}
		if err := jwt.Validate(c, nil); err != nil {
			return nil, fmt.Errorf("--oidc-*: %w", err)
		}
		cfg, algs = c, t.OIDC.SigningAlgs
	}
	if cfg != nil {
		// Built even with no issuer in the file, so that a reload can
		// add one.
		a, err := jwt.New(cfg, jwt.Options{SigningAlgs: algs, APIAudiences: o.apiAudiences()})
		if err != nil {
			return nil, err
		}
		out.jwt = a
		out.tokens = append(out.tokens, a)
	}
	if t.WebhookConfigFile != "" {
		w, err := tokenwebhook.New(tokenwebhook.Config{
			ConfigFile: t.WebhookConfigFile, Version: t.WebhookVersion, CacheTTL: t.WebhookCacheTTL, APIAudiences: o.apiAudiences(),
		})
		if err != nil {
			out.close()
			return nil, err
		}
		out.tokens = append(out.tokens, w)
	}
	return out, nil
}

// run starts the --authentication-config reload loop (if any) and
// returns the function that stops it and the JWT authenticators' key
// fetchers, for Run's defers. A nil t (aggregated mode) runs nothing.
func (t *tokenAuthn) run(ctx context.Context, log *slog.Logger) (stop func()) {
	if t == nil || t.jwt == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	if t.configFile != "" {
		wg.Go(func() {
			t.jwt.Watch(ctx, t.configFile, t.loaded, t.interval, authenticationConfigUpdateTimeout, log)
		})
	}
	return func() {
		cancel()
		wg.Wait()
		t.jwt.Close()
	}
}

// close stops the JWT authenticators' key fetchers, for a start that
// fails before run.
func (t *tokenAuthn) close() {
	if t.jwt != nil {
		t.jwt.Close()
	}
}
