// Package authzconfig builds the server's authorizer chain from
// kube-apiserver's AuthorizationConfiguration (apiserver.config.k8s.io):
// from the --authorization-config file, or from the --authorization-mode
// and --authorization-webhook-* flags turned into one, as kube-apiserver
// does, so both paths share one builder. The file is reloaded when it
// changes (Reloadable).
package authzconfig

import (
	"fmt"
	"os"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	api "k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/apis/apiserver/load"
	"k8s.io/apiserver/pkg/apis/apiserver/validation"
	authorizationcel "k8s.io/apiserver/pkg/authorization/cel"
)

// The authorizer types the server builds, kube-apiserver's names (it has
// Node and ABAC too, which need kinds apiloom does not serve).
const (
	TypeRBAC        = "RBAC"
	TypeWebhook     = "Webhook"
	TypeAlwaysAllow = "AlwaysAllow"
	TypeAlwaysDeny  = "AlwaysDeny"
)

// Types are the authorizer types, the values --authorization-mode takes.
var Types = []string{TypeAlwaysAllow, TypeAlwaysDeny, TypeWebhook, TypeRBAC}

// repeatable are the types a configuration may name more than once.
var repeatable = sets.New(TypeWebhook)

// WebhookFlags are kube-apiserver's --authorization-webhook-* flags, the
// one webhook --authorization-mode=Webhook configures.
type WebhookFlags struct {
	ConfigFile      string        // --authorization-webhook-config-file, a kubeconfig
	Version         string        // --authorization-webhook-version: v1 or v1beta1
	AuthorizedTTL   time.Duration // --authorization-webhook-cache-authorized-ttl
	UnauthorizedTTL time.Duration // --authorization-webhook-cache-unauthorized-ttl
}

// FromModes is the configuration --authorization-mode and the webhook
// flags stand for, as kube-apiserver builds it: each mode an authorizer
// named after it in lower case, the webhook "default" with a 30s timeout
// and failure policy NoOpinion, a zero TTL turning its cache off.
func FromModes(modes []string, w WebhookFlags) *api.AuthorizationConfiguration {
	c := &api.AuthorizationConfiguration{}
	for _, m := range modes {
		if m != TypeWebhook {
			c.Authorizers = append(c.Authorizers, api.AuthorizerConfiguration{Type: api.AuthorizerType(m), Name: NameFor(m)})
			continue
		}
		file := w.ConfigFile
		c.Authorizers = append(c.Authorizers, api.AuthorizerConfiguration{
			Type: api.TypeWebhook, Name: "default",
			Webhook: &api.WebhookConfiguration{
				AuthorizedTTL:              metav1.Duration{Duration: w.AuthorizedTTL},
				CacheAuthorizedRequests:    w.AuthorizedTTL != 0,
				UnauthorizedTTL:            metav1.Duration{Duration: w.UnauthorizedTTL},
				CacheUnauthorizedRequests:  w.UnauthorizedTTL != 0,
				Timeout:                    metav1.Duration{Duration: 30 * time.Second},
				FailurePolicy:              api.FailurePolicyNoOpinion,
				SubjectAccessReviewVersion: w.Version,
				ConnectionInfo: api.WebhookConnectionInfo{
					Type: api.AuthorizationWebhookConnectionInfoTypeKubeConfigFile, KubeConfigFile: &file,
				},
			},
		})
	}
	return c
}

// NameFor is the name an authorizer of a type other than Webhook must
// have: its type in lower case, as kube-apiserver requires.
func NameFor(mode string) string { return strings.ToLower(mode) }

// LoadFile reads, decodes and validates an --authorization-config file;
// data is what was read, for telling a changed file from an unchanged one.
func LoadFile(path string, compiler authorizationcel.Compiler, require sets.Set[api.AuthorizerType]) (*api.AuthorizationConfiguration, []byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	c, err := LoadData(data, compiler, require)
	return c, data, err
}

// LoadData decodes data with k8s.io/apiserver's loader (v1, v1beta1 or
// v1alpha1, defaulted) and validates it with its validation and
// kube-apiserver's checks, with their messages: the types known here, the
// names of the types other than Webhook, and that every type of require
// (those built at start but Webhook) is still there.
func LoadData(data []byte, compiler authorizationcel.Compiler, require sets.Set[api.AuthorizerType]) (*api.AuthorizationConfiguration, error) {
	c, err := load.LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("failed to load AuthorizationConfiguration from file: %w", err)
	}
	if errs := validation.ValidateAuthorizationConfiguration(compiler, nil, c, sets.New(Types...), repeatable); len(errs) != 0 {
		return nil, errs.ToAggregate()
	}
	var errs []error
	seen := sets.New[api.AuthorizerType]()
	for _, a := range c.Authorizers {
		if a.Type == api.TypeWebhook {
			continue
		}
		seen.Insert(a.Type)
		if want := NameFor(string(a.Type)); a.Name != want {
			errs = append(errs, fmt.Errorf("expected name %s for authorizer %s instead of %s", want, a.Type, a.Name))
		}
	}
	if missing := require.Difference(seen); missing.Len() > 0 {
		errs = append(errs, fmt.Errorf("missing required types: %v", sets.List(missing)))
	}
	if len(errs) > 0 {
		return nil, utilerrors.NewAggregate(errs)
	}
	return c, nil
}

// Uses reports whether c has an authorizer of type t.
func Uses(c *api.AuthorizationConfiguration, t string) bool {
	for _, a := range c.Authorizers {
		if string(a.Type) == t {
			return true
		}
	}
	return false
}
