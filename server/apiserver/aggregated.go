package apiserver

import (
	"errors"

	"github.com/spf13/pflag"
	genericoptions "k8s.io/apiserver/pkg/server/options"
)

// DelegationOptions are the options of aggregated mode: apiloom serving
// its own groups behind a host cluster's kube-apiserver, which proxies
// /apis/<group>/<version> to it for an APIService (docs/aggregation.md).
// Who a request is and what it may do are then the host's to say, as for
// any extension API server: the options and flags are k8s.io/apiserver's
// delegating ones, as sample-apiserver takes them.
type DelegationOptions struct {
	// Authentication (--authentication-kubeconfig, --requestheader-*,
	// --authentication-token-webhook-cache-ttl, ...): the front proxy's
	// request headers believed from a client certificate the
	// request-header CA signed, tokens reviewed by the host
	// (TokenReview), client certificates verified against the host's
	// client CA; the CAs and the allowed names read live from the host's
	// kube-system/extension-apiserver-authentication ConfigMap unless
	// given as flags. --client-ca-file is the standalone flag's.
	Authentication *genericoptions.DelegatingAuthenticationOptions
	// Authorization (--authorization-kubeconfig, the SubjectAccessReview
	// cache TTLs, --authorization-always-allow-paths): system:masters
	// and the health checks allowed, everything else asked of the host.
	Authorization *genericoptions.DelegatingAuthorizationOptions
	// Kubeconfig (--kubeconfig, upstream's name for an extension server's
	// core API) reaches the host for what the server reads there, its
	// Namespaces; "" means --authentication-kubeconfig's.
	Kubeconfig string
}

// defaultDelegationOptions are upstream's defaults.
func defaultDelegationOptions() DelegationOptions {
	return DelegationOptions{
		Authentication: genericoptions.NewDelegatingAuthenticationOptions(),
		Authorization:  genericoptions.NewDelegatingAuthorizationOptions(),
	}
}

// Aggregated reports whether the server runs in aggregated mode: it does
// when either delegating kubeconfig is given, and the other then defaults
// to it.
func (o *Options) Aggregated() bool {
	d := o.Delegation
	return d.Authentication != nil && d.Authentication.RemoteKubeConfigFile != "" ||
		d.Authorization != nil && d.Authorization.RemoteKubeConfigFile != ""
}

// hostKubeconfig is the kubeconfig that reaches the host's core API.
func (d *DelegationOptions) hostKubeconfig() string {
	switch {
	case d.Kubeconfig != "":
		return d.Kubeconfig
	case d.Authentication.RemoteKubeConfigFile != "":
		return d.Authentication.RemoteKubeConfigFile
	}
	return d.Authorization.RemoteKubeConfigFile
}

// addDelegationFlags binds d to upstream's delegating flags, but for those
// fs has already (--client-ca-file, whose file is the standalone mode's
// too).
func (o *Options) addDelegationFlags(fs *pflag.FlagSet) {
	d := &o.Delegation
	upstream := pflag.NewFlagSet("delegation", pflag.ContinueOnError)
	d.Authentication.AddFlags(upstream)
	d.Authorization.AddFlags(upstream)
	upstream.VisitAll(func(f *pflag.Flag) {
		if fs.Lookup(f.Name) != nil {
			return
		}
		f.Usage = "aggregated mode: " + f.Usage
		fs.AddFlag(f)
	})
	fs.StringVar(&d.Kubeconfig, "kubeconfig", d.Kubeconfig, "aggregated mode: kubeconfig of the host cluster's kube-apiserver, "+
		"where the server watches Namespaces for its namespace lifecycle admission; default --authentication-kubeconfig")
}

// validateDelegation reports upstream's checks of the delegating options,
// and what aggregated mode cannot take.
func (o *Options) validateDelegation() []error {
	d := o.Delegation
	if d.Authentication == nil || d.Authorization == nil {
		return []error{errors.New("apiserver: Options.Delegation must come from DefaultOptions")}
	}
	errs := append(d.Authentication.Validate(), d.Authorization.Validate()...)
	if o.Aggregated() && o.TokenAuthFile != "" {
		errs = append(errs, errors.New("--token-auth-file: in aggregated mode tokens are the host's to review (TokenReview)"))
	}
	return errs
}
