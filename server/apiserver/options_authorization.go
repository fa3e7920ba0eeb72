package apiserver

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/wait"
	api "k8s.io/apiserver/pkg/apis/apiserver"
	authorizationcel "k8s.io/apiserver/pkg/authorization/cel"
	genericoptions "k8s.io/apiserver/pkg/server/options"

	"github.com/apiloom/apiloom/server/authz/authzconfig"
)

// The authorization modes --authorization-mode takes, kube-apiserver's
// names. Requests are asked of each in turn; the first to allow or deny
// decides, and a request none allows is refused with 403.
const (
	AuthorizationModeRBAC        = authzconfig.TypeRBAC
	AuthorizationModeAlwaysAllow = authzconfig.TypeAlwaysAllow
	AuthorizationModeAlwaysDeny  = authzconfig.TypeAlwaysDeny
	AuthorizationModeWebhook     = authzconfig.TypeWebhook
)

var authorizationModes = authzconfig.Types

// AuthorizationConfigOptions are the webhook flags of --authorization-mode
// and the structured --authorization-config, which excludes them.
type AuthorizationConfigOptions struct {
	// File is --authorization-config: an AuthorizationConfiguration
	// (apiserver.config.k8s.io), reloaded when it changes.
	File string
	// Webhook are the --authorization-webhook-* flags.
	Webhook authzconfig.WebhookFlags
	// RetryBackoff is how webhooks retry (kube-apiserver's default; no flag).
	RetryBackoff wait.Backoff
	// ReloadInterval is how often File is reread besides the filesystem's
	// change events (kube-apiserver's minute; no flag).
	ReloadInterval time.Duration

	// legacyFlagsSet reports whether --authorization-mode or a webhook
	// flag was given on the command line, which File excludes.
	legacyFlagsSet func() bool
}

func defaultAuthorizationConfigOptions() AuthorizationConfigOptions {
	return AuthorizationConfigOptions{
		Webhook:      authzconfig.WebhookFlags{Version: "v1beta1", AuthorizedTTL: 5 * time.Minute, UnauthorizedTTL: 30 * time.Second},
		RetryBackoff: *genericoptions.DefaultAuthWebhookRetryBackoff(), ReloadInterval: time.Minute,
	}
}

const (
	authorizationModeFlag      = "authorization-mode"
	authorizationConfigFlag    = "authorization-config"
	webhookConfigFileFlag      = "authorization-webhook-config-file"
	webhookVersionFlag         = "authorization-webhook-version"
	webhookAuthorizedTTLFlag   = "authorization-webhook-cache-authorized-ttl"
	webhookUnauthorizedTTLFlag = "authorization-webhook-cache-unauthorized-ttl"
)

func (o *Options) addAuthorizationFlags(fs *pflag.FlagSet) {
	c := &o.AuthorizationConfig
	fs.StringSliceVar(&o.AuthorizationModes, authorizationModeFlag, o.AuthorizationModes,
		"ordered list of authorizers asked of every request ("+strings.Join(authorizationModes, ", ")+"); "+
			"the group system:masters is allowed everything before them, as in kube-apiserver; excluded by --authorization-config")
	fs.StringVar(&c.File, authorizationConfigFlag, c.File, "file with an AuthorizationConfiguration (apiserver.config.k8s.io/v1): "+
		"the chain of authorizers (RBAC, Webhook with match conditions, AlwaysAllow, AlwaysDeny), reloaded when it changes; "+
		"excludes --authorization-mode and the --authorization-webhook-* flags (docs/authorization.md)")
	fs.StringVar(&c.Webhook.ConfigFile, webhookConfigFileFlag, c.Webhook.ConfigFile,
		"kubeconfig of the webhook --authorization-mode=Webhook asks (SubjectAccessReview) on every request the authorizers before it do not decide")
	fs.StringVar(&c.Webhook.Version, webhookVersionFlag, c.Webhook.Version,
		"the authorization.k8s.io SubjectAccessReview version sent to and expected from the webhook: v1 or v1beta1")
	// The delegating flags of aggregated mode have the same names (with
	// their own defaults): a value given sets both.
	var allowTTL, denyTTL *time.Duration
	if d := o.Delegation.Authorization; d != nil {
		allowTTL, denyTTL = &d.AllowCacheTTL, &d.DenyCacheTTL
	}
	fs.Var(&twoDurations{&c.Webhook.AuthorizedTTL, allowTTL}, webhookAuthorizedTTLFlag,
		"how long the webhook's allow answers are cached (0: not cached); in aggregated mode, the host's SubjectAccessReview answers (default there 10s)")
	fs.Var(&twoDurations{&c.Webhook.UnauthorizedTTL, denyTTL}, webhookUnauthorizedTTLFlag,
		"how long the webhook's deny answers are cached (0: not cached); in aggregated mode, the host's SubjectAccessReview answers (default there 10s)")
	c.legacyFlagsSet = func() bool {
		return fs.Changed(authorizationModeFlag) || fs.Changed(webhookConfigFileFlag) || fs.Changed(webhookVersionFlag) ||
			fs.Changed(webhookAuthorizedTTLFlag) || fs.Changed(webhookUnauthorizedTTLFlag)
	}
}

// twoDurations is a duration flag that sets a second duration too, when
// there is one.
type twoDurations struct{ first, second *time.Duration }

func (d *twoDurations) String() string {
	if d.first == nil {
		return "0s"
	}
	return d.first.String()
}

func (d *twoDurations) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d.first = v
	if d.second != nil {
		*d.second = v
	}
	return nil
}

func (*twoDurations) Type() string { return "duration" }

func (o *Options) validateAuthorization() []error {
	c := o.AuthorizationConfig
	if c.File != "" {
		if c.legacyFlagsSet != nil && c.legacyFlagsSet() || c.legacyFlagsSet == nil && c.Webhook.ConfigFile != "" {
			return []error{fmt.Errorf("--%s can not be specified when --%s or --authorization-webhook-* flags are defined", authorizationConfigFlag, authorizationModeFlag)}
		}
		if o.Aggregated() {
			return []error{fmt.Errorf("--%s: in aggregated mode the host authorizes (SubjectAccessReview)", authorizationConfigFlag)}
		}
		if _, _, err := authzconfig.LoadFile(c.File, authorizationcel.NewDefaultCompiler(), nil); err != nil {
			return []error{fmt.Errorf("--%s: %w", authorizationConfigFlag, err)}
		}
		return nil
	}
	var errs []error
	if len(o.AuthorizationModes) == 0 {
		errs = append(errs, fmt.Errorf("--authorization-mode must name at least one of %s", strings.Join(authorizationModes, ", ")))
	}
	seen := map[string]bool{}
	for _, m := range o.AuthorizationModes {
		switch {
		case !slices.Contains(authorizationModes, m):
			errs = append(errs, fmt.Errorf("--authorization-mode: %q is not one of %s", m, strings.Join(authorizationModes, ", ")))
		case seen[m]:
			errs = append(errs, fmt.Errorf("--authorization-mode: %q is given twice", m))
		case m == AuthorizationModeWebhook && c.Webhook.ConfigFile == "":
			errs = append(errs, errors.New("authorization-mode Webhook's authorization config file not passed"))
		}
		seen[m] = true
	}
	if c.Webhook.ConfigFile != "" && !seen[AuthorizationModeWebhook] {
		errs = append(errs, fmt.Errorf("cannot specify --%s without mode Webhook", webhookConfigFileFlag))
	}
	if v := c.Webhook.Version; v != "v1" && v != "v1beta1" {
		errs = append(errs, fmt.Errorf("--%s: %q is neither v1 nor v1beta1", webhookVersionFlag, v))
	}
	if c.Webhook.AuthorizedTTL < 0 || c.Webhook.UnauthorizedTTL < 0 {
		errs = append(errs, errors.New("--authorization-webhook-cache-*-ttl must not be negative"))
	}
	if c.RetryBackoff.Steps <= 0 {
		errs = append(errs, fmt.Errorf("number of webhook retry attempts must be greater than 0, but is: %d", c.RetryBackoff.Steps))
	}
	return errs
}

// authorizationConfiguration is the chain the options configure, from
// --authorization-config (and its content, for its reloads) or from the
// flags.
func (o *Options) authorizationConfiguration() (*api.AuthorizationConfiguration, []byte, error) {
	c := o.AuthorizationConfig
	if c.File != "" {
		return authzconfig.LoadFile(c.File, authorizationcel.NewDefaultCompiler(), nil)
	}
	return authzconfig.FromModes(o.AuthorizationModes, c.Webhook), nil, nil
}

// authorizesWithRBAC reports whether the chain has the RBAC authorizer,
// which needs the RBAC kinds served and their informers started.
func (o *Options) authorizesWithRBAC() bool {
	c, _, err := o.authorizationConfiguration()
	return err == nil && authzconfig.Uses(c, AuthorizationModeRBAC)
}
