package apiserver

import (
	"context"
	"errors"
	"slices"
	"sync"

	rbacv1 "k8s.io/api/rbac/v1"

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
}

// startRBAC returns the RBAC authorizer over the watch caches of the four
// RBAC kinds, fed in the background until ctx ends; nil when RBAC is not
// among the authorization modes.
func (s *Server) startRBAC(ctx context.Context, served *registry.Served, background *sync.WaitGroup) (rbacAuthorizer, error) {
	if !slices.Contains(s.opts.AuthorizationModes, AuthorizationModeRBAC) {
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
