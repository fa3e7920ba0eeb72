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
	infos := s.registry.Infos()
	served := func(plural string) bool {
		return slices.ContainsFunc(infos, func(i *resource.Info) bool { return i.Group == "rbac.authorization.k8s.io" && i.Plural == plural })
	}
	if !served("clusterroles") || !served("clusterrolebindings") {
		return nil
	}
	client, err := kubernetes.NewForConfig(s.loopbackConfig("apiloom-rbac-bootstrap"))
	if err != nil {
		return fmt.Errorf("rbac policy: %w", err)
	}
	policy := rbacbootstrap.Default(infos)
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
