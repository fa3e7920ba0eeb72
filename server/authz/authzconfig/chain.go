package authzconfig

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/util/wait"
	api "k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	authorizationcel "k8s.io/apiserver/pkg/authorization/cel"
	authorizationmetrics "k8s.io/apiserver/pkg/authorization/metrics"
	"k8s.io/apiserver/pkg/authorization/union"
	webhookutil "k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/apiserver/plugin/pkg/authorizer/webhook"
	webhookmetrics "k8s.io/apiserver/plugin/pkg/authorizer/webhook/metrics"
	"k8s.io/client-go/rest"
)

// RuleAuthorizer is an authorizer that can also list a user's rules
// (SelfSubjectRulesReview): the RBAC authorizer.
type RuleAuthorizer interface {
	authorizer.Authorizer
	authorizer.RuleResolver
}

// PrivilegedGroupName is the name of the first authorizer of every
// chain, which allows system:masters everything, as kube-apiserver's.
const PrivilegedGroupName = "kubernetes.io/system-privileged-group"

// Builder makes chains of authorizers from configurations. The RBAC
// authorizer is made once, at start, and shared by every chain built, as
// kube-apiserver's is; webhooks are made anew with each chain, with empty
// caches.
type Builder struct {
	// RBAC is the RBAC authorizer; nil when RBAC is not served, and then
	// a configuration with RBAC is refused.
	RBAC RuleAuthorizer
	// Backoff is how the webhooks retry a failed SubjectAccessReview
	// (kube-apiserver's: 500ms, x1.5, 5 steps).
	Backoff wait.Backoff
	// Compiler compiles the webhooks' match conditions; shared across
	// reloads.
	Compiler authorizationcel.Compiler
	// InCluster is the connection of webhooks with connectionInfo
	// InClusterConfig; rest.InClusterConfig when nil.
	InCluster func() (*rest.Config, error)
}

// errNoRBAC refuses a configuration with RBAC when the server started
// without it, as kube-apiserver does (its informers are made at start).
var errNoRBAC = errors.New("authorizer type RBAC is not allowed if it was not enabled at initial server startup")

// Build makes c's chain: system:masters' bypass, then c's authorizers in
// order, joined with k8s.io/apiserver's union (the first to allow or deny
// decides), each counted in apiserver_authorization_decisions_total. The
// rule resolver joins theirs, for SelfSubjectRulesReview.
func (b *Builder) Build(c *api.AuthorizationConfiguration) (authorizer.Authorizer, authorizer.RuleResolver, error) {
	if len(c.Authorizers) == 0 {
		return nil, nil, errors.New("at least one authorization mode must be passed")
	}
	registerMetrics()
	chain := []union.NamedAuthorizer{{AuthorizerName: PrivilegedGroupName, Authorizer: authorizerfactory.NewPrivilegedGroups(user.SystemPrivilegedGroup)}}
	var resolvers []authorizer.RuleResolver
	for _, ac := range c.Authorizers {
		var a RuleAuthorizer
		switch string(ac.Type) {
		case TypeAlwaysAllow:
			a = authorizerfactory.NewAlwaysAllowAuthorizer()
		case TypeAlwaysDeny:
			a = authorizerfactory.NewAlwaysDenyAuthorizer()
		case TypeRBAC:
			if b.RBAC == nil {
				return nil, nil, errNoRBAC
			}
			a = b.RBAC
		case TypeWebhook:
			w, err := b.webhook(ac.Name, ac.Webhook)
			if err != nil {
				return nil, nil, fmt.Errorf("authorizer %s: %w", ac.Name, err)
			}
			a = w
		default:
			return nil, nil, fmt.Errorf("unknown authorization mode %s specified", ac.Type)
		}
		chain = append(chain, union.NamedAuthorizer{
			AuthorizerName: ac.Name,
			Authorizer:     authorizationmetrics.InstrumentedAuthorizer(string(ac.Type), ac.Name, a),
		})
		resolvers = append(resolvers, a)
	}
	u, err := union.New(chain...)
	if err != nil {
		return nil, nil, err
	}
	return u, union.NewRuleResolvers(resolvers...), nil
}

// webhook makes the webhook authorizer of one configuration: its
// kubeconfig or in-cluster connection, timeout, failure policy, cache
// TTLs (a cache off is a zero TTL) and match conditions.
func (b *Builder) webhook(name string, c *api.WebhookConfiguration) (*webhook.WebhookAuthorizer, error) {
	var cfg *rest.Config
	var err error
	switch c.ConnectionInfo.Type {
	case api.AuthorizationWebhookConnectionInfoTypeKubeConfigFile:
		cfg, err = webhookutil.LoadKubeconfig(*c.ConnectionInfo.KubeConfigFile, nil)
	case api.AuthorizationWebhookConnectionInfoTypeInCluster:
		inCluster := b.InCluster
		if inCluster == nil {
			inCluster = rest.InClusterConfig
		}
		cfg, err = inCluster()
	default:
		err = fmt.Errorf("unknown connectionInfo type %q", c.ConnectionInfo.Type)
	}
	if err != nil {
		return nil, err
	}
	if c.Timeout.Duration != 0 {
		cfg.Timeout = c.Timeout.Duration
	}
	var onError authorizer.Decision
	switch c.FailurePolicy {
	case api.FailurePolicyNoOpinion:
		onError = authorizer.DecisionNoOpinion
	case api.FailurePolicyDeny:
		onError = authorizer.DecisionDeny
	default:
		return nil, fmt.Errorf("unknown failurePolicy %q", c.FailurePolicy)
	}
	allowTTL, denyTTL := c.AuthorizedTTL.Duration, c.UnauthorizedTTL.Duration
	if !c.CacheAuthorizedRequests {
		allowTTL = 0
	}
	if !c.CacheUnauthorizedRequests {
		denyTTL = 0
	}
	return webhook.New(cfg, c.SubjectAccessReviewVersion, allowTTL, denyTTL, b.Backoff, onError,
		c.MatchConditions, name, webhookMetrics{WebhookMetrics: webhookmetrics.NewWebhookMetrics(), MatcherMetrics: authorizationcel.NewMatcherMetrics()},
		b.Compiler)
}

// webhookMetrics records what kube-apiserver's webhooks record: their
// evaluations, durations and failures open, and the match conditions'
// evaluations, not the client's requests.
type webhookMetrics struct {
	webhookmetrics.NoopRequestMetrics
	webhookmetrics.WebhookMetrics
	authorizationcel.MatcherMetrics
}

func registerMetrics() {
	authorizationmetrics.RegisterMetrics()
	webhookmetrics.RegisterWebhookMetrics()
	authorizationcel.RegisterMetrics()
}
