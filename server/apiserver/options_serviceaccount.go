package apiserver

import (
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/spf13/pflag"
)

// defaultServiceAccountIssuer is the issuer when --service-account-issuer
// is not given: the one kubeadm configures (and our kube-apiserver peer
// runs with), the in-cluster name of the API server, so tokens read the
// same as a kubeadm cluster's. It is a name, not an address anyone must
// reach: relying parties that fetch the JWKS need a reachable issuer set
// with the flag.
const defaultServiceAccountIssuer = "https://kubernetes.default.svc"

// ServiceAccountOptions are kube-apiserver's ServiceAccount token flags.
type ServiceAccountOptions struct {
	// Issuers: the first issues tokens, all are accepted.
	Issuers []string
	// SigningKeyFile is the private key tokens are signed with; "" is
	// DataDir/pki/sa.key, generated at first start.
	SigningKeyFile string
	// KeyFiles hold more public keys tokens are verified with.
	KeyFiles []string
	// MaxExpiration shortens longer token requests; 0: no bound.
	MaxExpiration time.Duration
	// ExtendExpiration is upstream's flag, which extends only tokens bound
	// to Pods: apiloom serves none, so it changes nothing here.
	ExtendExpiration bool
	// JWKSURI overrides jwks_uri in the discovery document.
	JWKSURI string
	// APIAudiences are the audiences the API accepts; empty: the issuers.
	APIAudiences []string
}

func defaultServiceAccountOptions() ServiceAccountOptions {
	return ServiceAccountOptions{ExtendExpiration: true}
}

func (o *Options) addServiceAccountFlags(fs *pflag.FlagSet) {
	s := &o.ServiceAccounts
	fs.StringArrayVar(&s.Issuers, "service-account-issuer", s.Issuers, "identifier of the ServiceAccount token issuer (iss claim); repeatable: the first issues tokens, "+
		"every one is accepted (to move to a new issuer without invalidating tokens); default "+defaultServiceAccountIssuer)
	fs.StringVar(&s.SigningKeyFile, "service-account-signing-key-file", s.SigningKeyFile, "PEM private key (RSA or ECDSA) ServiceAccount tokens are signed with; "+
		"default: --data-dir/pki/sa.key, a 2048-bit RSA key generated at first start")
	fs.StringArrayVar(&s.KeyFiles, "service-account-key-file", s.KeyFiles, "PEM file of public (or private) keys ServiceAccount tokens are also verified with, besides the signing key's; repeatable")
	fs.DurationVar(&s.MaxExpiration, "service-account-max-token-expiration", s.MaxExpiration, "the longest a requested ServiceAccount token is valid; longer requests are shortened, with a warning; 0: no bound")
	fs.BoolVar(&s.ExtendExpiration, "service-account-extend-token-expiration", s.ExtendExpiration, "extend the expiry of tokens bound to Pods (upstream's; apiloom serves no Pods, so it has no effect)")
	fs.StringVar(&s.JWKSURI, "service-account-jwks-uri", s.JWKSURI, "jwks_uri of the discovery document at /.well-known/openid-configuration; default: the issuer's /openid/v1/jwks")
	fs.StringSliceVar(&s.APIAudiences, "api-audiences", s.APIAudiences, "audiences of the API: tokens for none of them are refused, and token requests default to them; default: the issuers")
}

func (o *Options) validateServiceAccounts() []error {
	var errs []error
	s := &o.ServiceAccounts
	for _, iss := range s.Issuers {
		if iss == "" {
			errs = append(errs, errors.New("--service-account-issuer must not be empty"))
			continue
		}
		// As upstream: a URL must be https; any other string is a name.
		if u, err := url.Parse(iss); err == nil && u.Scheme != "" && u.Scheme != "https" && u.Host != "" {
			errs = append(errs, fmt.Errorf("--service-account-issuer %q: a URL must use the https scheme", iss))
		}
	}
	if s.MaxExpiration != 0 && s.MaxExpiration < time.Hour {
		errs = append(errs, errors.New("--service-account-max-token-expiration must be at least one hour"))
	}
	if s.JWKSURI != "" {
		if u, err := url.Parse(s.JWKSURI); err != nil || u.Scheme != "https" {
			errs = append(errs, fmt.Errorf("--service-account-jwks-uri %q must be an https URL", s.JWKSURI))
		}
	}
	return errs
}

// serviceAccountIssuers are the issuers, the default when none is given.
func (o *Options) serviceAccountIssuers() []string {
	if len(o.ServiceAccounts.Issuers) == 0 {
		return []string{defaultServiceAccountIssuer}
	}
	return o.ServiceAccounts.Issuers
}

// apiAudiences are --api-audiences, defaulting to the issuers as upstream.
func (o *Options) apiAudiences() []string {
	if len(o.ServiceAccounts.APIAudiences) == 0 {
		return o.serviceAccountIssuers()
	}
	return o.ServiceAccounts.APIAudiences
}
