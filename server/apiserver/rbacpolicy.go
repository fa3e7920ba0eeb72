package apiserver

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/apiloom/apiloom/server/rbacbootstrap"
	"github.com/apiloom/apiloom/server/resource"
)

// servesRBAC reports whether the server serves the RBAC resource plural
// ("clusterroles").
func (s *Server) servesRBAC(plural string) bool {
	return slices.ContainsFunc(s.registry.Infos(), func(i *resource.Info) bool {
		return i.Group == "rbac.authorization.k8s.io" && i.Plural == plural
	})
}

// servesClusterRoles reports whether ClusterRoles are served, which the
// clusterrole-aggregation controller needs.
func (s *Server) servesClusterRoles() bool { return s.servesRBAC("clusterroles") }

// rbacPolicyRetry is the pause between attempts to reconcile the default
// RBAC policy when it could not be at start.
const rbacPolicyRetry = time.Second

// ensureRBACPolicy creates and reconciles the default RBAC policy
// (package rbacbootstrap: upstream's default ClusterRoles and bindings and
// the aggregated roles of the user kinds), when the ClusterRoles and
// ClusterRoleBindings are served: through this server (loopback, as
// system:masters), as ensureSystemNamespaces makes the system namespaces
// and for the same reasons; what fails is retried in the background until
// ctx ends, owned by wg.
func (s *Server) ensureRBACPolicy(ctx context.Context, wg *sync.WaitGroup) error {
	if !s.servesRBAC("clusterroles") || !s.servesRBAC("clusterrolebindings") {
		return nil
	}
	client, err := kubernetes.NewForConfig(s.loopbackConfig("apiloom-rbac-bootstrap"))
	if err != nil {
		return fmt.Errorf("rbac policy: %w", err)
	}
	policy := rbacbootstrap.Default(s.registry.Infos())
	err = rbacbootstrap.Reconcile(ctx, client, policy)
	if err == nil {
		return nil
	}
	s.log.Warn("reconciling the default RBAC policy; retrying in the background", "err", err)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(rbacPolicyRetry):
			}
			if rbacbootstrap.Reconcile(ctx, client, policy) == nil {
				return
			}
		}
	}()
	return nil
}
