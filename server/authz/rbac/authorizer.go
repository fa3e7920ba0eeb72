package rbac

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/apiloom/apiloom/server/storage"
)

// Sources are the storages the Authorizer follows: the watch caches of
// the served RBAC kinds (registry.Storage), or their etcd stores.
type Sources struct {
	Roles               storage.Interface[*rbacv1.Role]
	RoleBindings        storage.Interface[*rbacv1.RoleBinding]
	ClusterRoles        storage.Interface[*rbacv1.ClusterRole]
	ClusterRoleBindings storage.Interface[*rbacv1.ClusterRoleBinding]
}

// Authorizer is the RBAC authorizer (package doc). Run feeds it; until
// HasSynced it answers from what it has read so far, so the server waits
// for WaitForSync before it serves requests.
type Authorizer struct {
	// Immutable:
	src   Sources
	x     *index
	log   *slog.Logger
	pause time.Duration
	// synced is closed once every kind has been listed once; left counts
	// the kinds not listed yet.
	synced   chan struct{}
	syncedMu sync.Mutex // guards left
	left     int
}

var (
	_ authorizer.Authorizer   = (*Authorizer)(nil)
	_ authorizer.RuleResolver = (*Authorizer)(nil)
)

// Option configures New.
type Option func(*Authorizer)

// WithLogger logs the authorizer's relists (when its watches end or
// expire) to l; the default discards them.
func WithLogger(l *slog.Logger) Option { return func(a *Authorizer) { a.log = l } }

// DefaultRetryPause is how long a kind whose list or watch failed waits
// before it lists again. A watch that expired relists at once.
const DefaultRetryPause = time.Second

// WithRetryPause replaces DefaultRetryPause.
func WithRetryPause(d time.Duration) Option { return func(a *Authorizer) { a.pause = d } }

// New returns an authorizer over src; Run feeds it.
func New(src Sources, opts ...Option) *Authorizer {
	a := &Authorizer{src: src, x: newIndex(), log: slog.New(slog.DiscardHandler), pause: DefaultRetryPause,
		synced: make(chan struct{}), left: len(kinds)}
	for _, o := range opts {
		o(a)
	}
	return a
}

// Authorize allows a when a rule of a role bound to its user (by name,
// group or service account) allows it, with the reason
// `RBAC: allowed by ClusterRoleBinding "b" of ClusterRole "r" to Group "g"`.
// Otherwise it has no opinion, with a reason naming the missing roles
// that bindings of the user refer to ("" when there are none). It never
// returns an error.
func (a *Authorizer) Authorize(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	u := attrs.GetUser()
	if u == nil {
		return authorizer.DecisionNoOpinion, "", nil
	}
	var (
		allowedBy *binding
		errs      []error
	)
	a.x.mu.RLock()
	a.x.forEachBindingLocked(u, attrs.GetNamespace(), false, func(b *binding) bool {
		rules, err := a.x.roleRulesLocked(b.roleRef, b.key.namespace)
		if err != nil {
			errs = append(errs, err)
			return true
		}
		for i := range rules {
			if ruleAllows(attrs, &rules[i]) {
				allowedBy = b
				return false
			}
		}
		return true
	})
	a.x.mu.RUnlock()
	if allowedBy != nil {
		return authorizer.DecisionAllow, "RBAC: allowed by " + allowedBy.describe(u), nil
	}
	if len(errs) > 0 {
		// The aggregate writes each distinct message once.
		return authorizer.DecisionNoOpinion, fmt.Sprintf("RBAC: %v", utilerrors.NewAggregate(errs)), nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

// ConditionsAwareAuthorize is Authorize: RBAC has no conditions.
func (a *Authorizer) ConditionsAwareAuthorize(ctx context.Context, attrs authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return authorizer.ConditionsAwareDecisionFromParts(a.Authorize(ctx, attrs))
}

// EvaluateConditions fails closed: RBAC has no conditions to evaluate.
func (a *Authorizer) EvaluateConditions(context.Context, authorizer.ConditionsAwareDecision, authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, "", authorizer.ErrorConditionEvaluationNotSupported
}

// RulesFor lists what u may do in namespace ns, for
// SelfSubjectRulesReview: each rule with resources as a resource rule,
// each with nonResourceURLs as a non-resource rule, in Resolver.RulesFor's
// order. The list is never marked incomplete; the error names the
// missing roles.
func (a *Authorizer) RulesFor(ctx context.Context, u user.Info, ns string) ([]authorizer.ResourceRuleInfo, []authorizer.NonResourceRuleInfo, bool, error) {
	var (
		res    []authorizer.ResourceRuleInfo
		nonRes []authorizer.NonResourceRuleInfo
	)
	rules, err := a.Resolver().RulesFor(ctx, u, ns)
	for _, r := range rules {
		if len(r.Resources) > 0 {
			res = append(res, &authorizer.DefaultResourceRuleInfo{
				Verbs: r.Verbs, APIGroups: r.APIGroups, Resources: r.Resources, ResourceNames: r.ResourceNames})
		}
		if len(r.NonResourceURLs) > 0 {
			nonRes = append(nonRes, &authorizer.DefaultNonResourceRuleInfo{Verbs: r.Verbs, NonResourceURLs: r.NonResourceURLs})
		}
	}
	return res, nonRes, false, err
}

// Resolver returns the rule resolver over a's index (escalation checks).
func (a *Authorizer) Resolver() *Resolver { return &Resolver{x: a.x} }

// HasSynced reports whether every kind has been listed at least once.
func (a *Authorizer) HasSynced() bool {
	select {
	case <-a.synced:
		return true
	default:
		return false
	}
}

// WaitForSync blocks until HasSynced or ctx ends (ctx.Err()).
func (a *Authorizer) WaitForSync(ctx context.Context) error {
	select {
	case <-a.synced:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// listed records that one kind has been listed for the first time.
func (a *Authorizer) listed() {
	a.syncedMu.Lock()
	defer a.syncedMu.Unlock()
	if a.left--; a.left == 0 {
		close(a.synced)
	}
}
