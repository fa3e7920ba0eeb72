package apiserver

import (
	"context"
	"errors"
	"slices"
	"sync"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/apiloom/apiloom/server/authz/rbac"
	"github.com/apiloom/apiloom/server/registry"
)

// errRBACNotServed is why a server asked for RBAC authorization does not
// start without the kinds RBAC reads its rules from.
var errRBACNotServed = errors.New("--authorization-mode=RBAC needs the rbac.authorization.k8s.io kinds served " +
	"(roles, rolebindings, clusterroles and clusterrolebindings in --builtin-apis), or --authorization-mode=AlwaysAllow")

// rbacAuthorizer is the RBAC authorizer as the server uses it.
type rbacAuthorizer interface {
	ruleAuthorizer
	HasSynced() bool
	WaitForSync(ctx context.Context) error
}

// servesRBACKinds reports whether reg serves the four kinds RBAC reads.
func servesRBACKinds(reg *registry.Registry) bool {
	n := 0
	for _, info := range reg.Infos() {
		if info.Group == rbacv1.GroupName && slices.Contains([]string{"roles", "rolebindings", "clusterroles", "clusterrolebindings"}, info.Plural) {
			n++
		}
	}
	return n == 4
}

// startRBAC returns the RBAC authorizer over the watch caches of the four
// RBAC kinds, fed in the background until ctx ends; nil when RBAC is not
// among the authorization modes.
func (s *Server) startRBAC(ctx context.Context, served *registry.Served, background *sync.WaitGroup) (rbacAuthorizer, error) {
	if !s.opts.authorizesWithRBAC() {
		return nil, nil
	}
	roles, ok1 := registry.Storage[*rbacv1.Role](served)
	bindings, ok2 := registry.Storage[*rbacv1.RoleBinding](served)
	clusterRoles, ok3 := registry.Storage[*rbacv1.ClusterRole](served)
	clusterBindings, ok4 := registry.Storage[*rbacv1.ClusterRoleBinding](served)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return nil, errRBACNotServed
	}
	a := rbac.New(rbac.Sources{Roles: roles, RoleBindings: bindings, ClusterRoles: clusterRoles, ClusterRoleBindings: clusterBindings},
		rbac.WithLogger(s.log.With("component", "rbac")))
	background.Add(1)
	go func() { defer background.Done(); a.Run(ctx) }()
	return a, nil
}

// escalationResolver is what the RBAC kinds' escalation checks ask
// (rbacescalation.Resolver): the authorizers every request passes, for the
// escalate and bind verbs, and the RBAC authorizer's rules. The registry
// is built with it before the authorizers exist, since they read the
// resources it builds; set fills it in before any request is served.
type escalationResolver struct {
	authorizer.Authorizer
	rules *rbac.Resolver // nil without RBAC, whose "escalate" then never needs them
}

func (e *escalationResolver) set(authz authorizer.Authorizer, a rbacAuthorizer) {
	e.Authorizer = authz
	if r, ok := a.(*rbac.Authorizer); ok {
		e.rules = r.Resolver()
	}
}

// errNoRBACRules answers a question about rules when RBAC does not
// authorize: the other authorizers (AlwaysAllow) grant escalate and bind.
var errNoRBACRules = errors.New("RBAC authorization is off: no rules to compare")

func (e *escalationResolver) RulesFor(ctx context.Context, u user.Info, ns string) ([]rbacv1.PolicyRule, error) {
	if e.rules == nil {
		return nil, errNoRBACRules
	}
	return e.rules.RulesFor(ctx, u, ns)
}

func (e *escalationResolver) GetRoleReferenceRules(ctx context.Context, ref rbacv1.RoleRef, ns string) ([]rbacv1.PolicyRule, error) {
	if e.rules == nil {
		return nil, errNoRBACRules
	}
	return e.rules.GetRoleReferenceRules(ctx, ref, ns)
}
