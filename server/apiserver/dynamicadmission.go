package apiserver

import (
	"fmt"
	"slices"

	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/apiloom/apiloom/server/admission"
	"github.com/apiloom/apiloom/server/admission/dynamic"
	"github.com/apiloom/apiloom/server/admission/quota"
	"github.com/apiloom/apiloom/server/resource"
)

// configuredBy are the resources whose objects configure each plugin of
// dynamic admission: it runs only where they are served.
var configuredBy = map[string][]string{
	admission.MutatingAdmissionPolicy:    {"mutatingadmissionpolicies", "mutatingadmissionpolicybindings"},
	admission.MutatingAdmissionWebhook:   {"mutatingwebhookconfigurations"},
	admission.ValidatingAdmissionPolicy:  {"validatingadmissionpolicies", "validatingadmissionpolicybindings"},
	admission.ValidatingAdmissionWebhook: {"validatingwebhookconfigurations"},
}

// validateAdmissionPlugins checks --disable-admission-plugins' names.
func validateAdmissionPlugins(names []string) error {
	for _, name := range names {
		if !slices.Contains(dynamic.Names, name) {
			return fmt.Errorf("--disable-admission-plugins: %q is none of %v", name, dynamic.Names)
		}
	}
	return nil
}

// dynamicAdmission are the plugins of dynamic admission the server runs:
// each whose configuring kinds it serves and --disable-admission-plugins
// does not name. They need the namespaces, for their namespace
// selectors; without them none runs. An aggregated server runs every one
// not disabled, configured by the host cluster's objects, as an extension
// server built on k8s.io/apiserver does: the policies and webhooks a
// cluster enforces apply to the kinds it aggregates.
func (s *Server) dynamicAdmission() (*dynamic.Plugins, error) {
	if !s.opts.Aggregated() && !s.registry.ServesNamespaces() {
		return nil, nil
	}
	return dynamic.New(func(name string) bool {
		if slices.Contains(s.opts.DisableAdmissionPlugins, name) {
			return false
		}
		if name == admission.ResourceQuota {
			// Upstream's extension servers do not enable it: the host
			// cluster's quotas count only what the host stores.
			return !s.opts.Aggregated() && s.servesResourceQuotas()
		}
		if s.opts.Aggregated() {
			return true
		}
		for _, plural := range configuredBy[name] {
			if !s.servesAdmissionRegistration(plural) {
				return false
			}
		}
		return true
	})
}

// servesAdmissionRegistration reports whether the server serves the
// admissionregistration.k8s.io/v1 resource plural.
func (s *Server) servesAdmissionRegistration(plural string) bool {
	return slices.ContainsFunc(s.registry.Infos(), func(i *resource.Info) bool {
		return i.Group == "admissionregistration.k8s.io" && i.Version == "v1" && i.Plural == plural
	})
}

// servesPolicies reports whether ValidatingAdmissionPolicies are served,
// whose status the validatingadmissionpolicy-status controller writes.
func (s *Server) servesPolicies() bool {
	return s.servesAdmissionRegistration("validatingadmissionpolicies")
}

// dynamicAdmissionEnv is where the plugins read their configuration: this
// server through its loopback, or the host cluster in aggregated mode,
// whose kinds (ConfigMaps as parameters) its discovery maps.
func (s *Server) dynamicAdmissionEnv(host *delegation, authz authorizer.Authorizer) (dynamic.Env, error) {
	if host == nil {
		return dynamic.Env{Client: s.loopbackConfig("apiloom-admission"), Authorizer: authz, RESTMapper: s.registry.RESTMapper(),
			Quota: quota.Configuration(quota.Counted(s.registry.Infos()), nil)}, nil
	}
	cfg := rest.CopyConfig(host.config)
	cfg.UserAgent = "apiloom-admission"
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return dynamic.Env{}, err
	}
	return dynamic.Env{Client: cfg, Authorizer: authz,
		RESTMapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))}, nil
}

// servesResourceQuotas reports whether core/v1 ResourceQuotas are served,
// which the ResourceQuota plugin and the quota controller need.
func (s *Server) servesResourceQuotas() bool {
	return slices.ContainsFunc(s.registry.Infos(), func(i *resource.Info) bool {
		return i.Group == "" && i.Version == "v1" && i.Plural == "resourcequotas"
	})
}
