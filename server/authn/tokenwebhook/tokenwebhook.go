// Package tokenwebhook is kube-apiserver's webhook token authentication
// (--authentication-token-webhook-config-file): a bearer token no other
// authenticator knows is sent in a TokenReview to a remote service, whose
// answers are cached, all by k8s.io/apiserver's own packages.
package tokenwebhook

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	tokencache "k8s.io/apiserver/pkg/authentication/token/cache"
	webhookutil "k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/apiserver/plugin/pkg/authenticator/token/webhook"
)

// Upstream's defaults for the flags.
const (
	DefaultVersion  = "v1beta1"
	DefaultCacheTTL = 2 * time.Minute
)

// Config is the webhook's flags.
type Config struct {
	// ConfigFile is a kubeconfig naming the service (its cluster) and
	// the credentials to present to it (its user).
	ConfigFile string
	// Version of authentication.k8s.io TokenReview sent: v1 or v1beta1.
	Version string
	// CacheTTL is how long an answer, allowed or denied, is remembered.
	CacheTTL time.Duration
	// APIAudiences are the server's audiences: a TokenReview without
	// spec.audiences is sent with them, as upstream.
	APIAudiences authenticator.Audiences
	// Backoff retries a failed call; nil is k8s.io/apiserver's default
	// (500ms, ×1.5, 5 steps).
	Backoff *wait.Backoff
}

// New builds the cached webhook authenticator. Like kube-apiserver's, the
// cache keeps the service's answers, allowed and denied, for CacheTTL, but
// not its errors (a failed call is retried by the next request).
func New(c Config) (authenticator.Token, error) {
	if c.Version == "" {
		c.Version = DefaultVersion
	}
	backoff := wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}
	if c.Backoff != nil {
		backoff = *c.Backoff
	}
	rc, err := webhookutil.LoadKubeconfig(c.ConfigFile, nil)
	if err != nil {
		return nil, fmt.Errorf("--authentication-token-webhook-config-file: %w", err)
	}
	w, err := webhook.New(rc, c.Version, c.APIAudiences, backoff)
	if err != nil {
		return nil, fmt.Errorf("authentication webhook: %w", err)
	}
	return tokencache.New(w, false, c.CacheTTL, c.CacheTTL), nil
}
