package apiserver

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"
	cliflag "k8s.io/component-base/cli/flag"

	"github.com/apiloom/apiloom/server/authn/jwt"
	"github.com/apiloom/apiloom/server/authn/tokenwebhook"
)

// TokenAuthnOptions are kube-apiserver's flags for the bearer-token
// authenticators beyond the token file: JWT issuers (structured
// configuration or the classic --oidc-* flags) and a webhook.
type TokenAuthnOptions struct {
	// AuthenticationConfigFile (--authentication-config) is an
	// apiserver.config.k8s.io AuthenticationConfiguration, reloaded while
	// serving.
	AuthenticationConfigFile string
	// AuthenticationConfigReloadInterval is how often the file is looked
	// at for changes (no flag; kube-apiserver watches it with inotify and
	// a one-minute poll).
	AuthenticationConfigReloadInterval time.Duration
	// OIDC are the --oidc-* flags; oidcFlagsSet says whether any was
	// given, which --authentication-config excludes.
	OIDC         jwt.Flags
	oidcFlagsSet bool

	// WebhookConfigFile (--authentication-token-webhook-config-file) is
	// the kubeconfig of a TokenReview service.
	WebhookConfigFile string
	// WebhookVersion (--authentication-token-webhook-version) is the
	// TokenReview version sent: v1 or v1beta1.
	WebhookVersion string
	// WebhookCacheTTL (--authentication-token-webhook-cache-ttl) is how
	// long its answers are cached.
	WebhookCacheTTL time.Duration
}

// defaultTokenAuthnOptions are kube-apiserver's defaults.
func defaultTokenAuthnOptions() TokenAuthnOptions {
	return TokenAuthnOptions{
		AuthenticationConfigReloadInterval: 10 * time.Second,
		OIDC:                               jwt.Flags{UsernameClaim: "sub", SigningAlgs: []string{"RS256"}},
		WebhookVersion:                     tokenwebhook.DefaultVersion,
		WebhookCacheTTL:                    tokenwebhook.DefaultCacheTTL,
	}
}

// addAuthenticationFlags adds kube-apiserver's flags for the JWT and
// webhook token authenticators, with its names, defaults and help.
func (o *Options) addAuthenticationFlags(fs *pflag.FlagSet) {
	t := &o.TokenAuthn
	fs.StringVar(&t.AuthenticationConfigFile, "authentication-config", t.AuthenticationConfigFile,
		"File with Authentication Configuration (apiserver.config.k8s.io/v1 AuthenticationConfiguration) to configure the JWT Token authenticator: issuers, audiences, claim mappings, CEL claim and user validation rules; reloaded when it changes. Mutually exclusive with the --oidc-* flags. Its anonymous section is not supported (use --anonymous-auth)")
	oidc := func(name string, v pflag.Value, usage string) {
		fs.Var(cliflag.NewTracker(v, &t.oidcFlagsSet), name, usage)
	}
	oidc("oidc-issuer-url", newStringValue(&t.OIDC.IssuerURL), "The URL of the OpenID issuer, only HTTPS scheme will be accepted. If set, it will be used to verify the OIDC JSON Web Token (JWT).")
	oidc("oidc-client-id", newStringValue(&t.OIDC.ClientID), "The client ID for the OpenID Connect client, must be set if oidc-issuer-url is set.")
	oidc("oidc-ca-file", newStringValue(&t.OIDC.CAFile), "If set, the OpenID server's certificate will be verified by one of the authorities in the oidc-ca-file, otherwise the host's root CA set will be used.")
	oidc("oidc-username-claim", newStringValue(&t.OIDC.UsernameClaim), "The OpenID claim to use as the user name. Note that claims other than the default ('sub') is not guaranteed to be unique and immutable.")
	oidc("oidc-username-prefix", newStringValue(&t.OIDC.UsernamePrefix), "If provided, all usernames will be prefixed with this value. If not provided, username claims other than 'email' are prefixed by the issuer URL to avoid clashes. To skip any prefixing, provide the value '-'.")
	oidc("oidc-groups-claim", newStringValue(&t.OIDC.GroupsClaim), "If provided, the name of a custom OpenID Connect claim for specifying user groups. The claim value is expected to be a string or array of strings.")
	oidc("oidc-groups-prefix", newStringValue(&t.OIDC.GroupsPrefix), "If provided, all groups will be prefixed with this value to prevent conflicts with other authentication strategies.")
	oidc("oidc-signing-algs", newStringSliceValue(&t.OIDC.SigningAlgs), "Comma-separated list of allowed JOSE asymmetric signing algorithms: RS256, RS384, RS512, ES256, ES384, ES512, PS256, PS384, PS512.")
	oidc("oidc-required-claim", cliflag.NewMapStringStringNoSplit(&t.OIDC.RequiredClaims), "A key=value pair that describes a required claim in the ID Token. If set, the claim is verified to be present in the ID Token with a matching value. Repeat this flag to specify multiple claims.")

	fs.StringVar(&t.WebhookConfigFile, "authentication-token-webhook-config-file", t.WebhookConfigFile,
		"File with webhook configuration for token authentication in kubeconfig format. The API server will query the remote service to determine authentication for bearer tokens.")
	fs.StringVar(&t.WebhookVersion, "authentication-token-webhook-version", t.WebhookVersion,
		"The API version of the authentication.k8s.io TokenReview to send to and expect from the webhook.")
	const ttl = "authentication-token-webhook-cache-ttl"
	if f := fs.Lookup(ttl); f != nil {
		// Aggregated mode's flag of the same name (the host's TokenReview
		// answers, default 10s) is the same knob standalone: one flag
		// sets both, each mode keeping its default when it is not given.
		f.Value = &alsoDuration{Value: f.Value, also: &t.WebhookCacheTTL}
		f.Usage = "The duration to cache responses from the webhook token authenticator (standalone: default " + t.WebhookCacheTTL.String() + "; " + f.Usage + ")"
	} else {
		fs.DurationVar(&t.WebhookCacheTTL, ttl, t.WebhookCacheTTL, "The duration to cache responses from the webhook token authenticator.")
	}
}

// alsoDuration is a flag value that also sets a second duration.
type alsoDuration struct {
	pflag.Value
	also *time.Duration
}

func (v *alsoDuration) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	if err := v.Value.Set(s); err != nil {
		return err
	}
	*v.also = d
	return nil
}

// validateAuthentication is kube-apiserver's validation of those flags,
// and refuses them in aggregated mode, where the host cluster says who
// the users are.
func (o *Options) validateAuthentication() []error {
	t := &o.TokenAuthn
	var errs []error
	switch {
	case t.AuthenticationConfigFile != "" && t.oidcFlagsSet:
		errs = append(errs, errors.New("authentication-config file and oidc-* flags are mutually exclusive"))
	case t.AuthenticationConfigFile == "" && t.oidcFlagsSet && (t.OIDC.IssuerURL == "" || t.OIDC.ClientID == ""):
		errs = append(errs, errors.New("oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set"))
	}
	if t.WebhookConfigFile != "" && t.WebhookVersion != "v1" && t.WebhookVersion != "v1beta1" {
		errs = append(errs, fmt.Errorf("--authentication-token-webhook-version %q: want v1 or v1beta1", t.WebhookVersion))
	}
	if t.WebhookCacheTTL < 0 {
		errs = append(errs, errors.New("--authentication-token-webhook-cache-ttl must not be negative"))
	}
	if o.Aggregated() && (t.AuthenticationConfigFile != "" || t.OIDC.IssuerURL != "" || t.WebhookConfigFile != "") {
		errs = append(errs, errors.New("--authentication-config, --oidc-* and --authentication-token-webhook-config-file do not apply in aggregated mode: the host cluster authenticates"))
	}
	return errs
}

// newStringValue and newStringSliceValue are pflag's own string and string
// slice values, made through a throwaway FlagSet so that they can be
// wrapped by a tracker.
func newStringValue(p *string) pflag.Value {
	fs := pflag.NewFlagSet("", pflag.ContinueOnError)
	fs.StringVar(p, "v", *p, "")
	return fs.Lookup("v").Value
}

func newStringSliceValue(p *[]string) pflag.Value {
	fs := pflag.NewFlagSet("", pflag.ContinueOnError)
	fs.StringSliceVar(p, "v", *p, "")
	return fs.Lookup("v").Value
}
