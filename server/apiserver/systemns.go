package apiserver

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/apiloom/apiloom/server/admission/nslifecycle"
)

// systemNamespacesRetry is the pause between attempts to create the
// system namespaces.
const systemNamespacesRetry = 200 * time.Millisecond

// ensureSystemNamespaces creates default, kube-system and kube-public,
// as kube-apiserver's system namespaces controller does, when namespaces
// are served: through this server (loopback), so they are defaulted and
// admitted as any client's, and idempotently, so replicas starting on one
// etcd together all succeed. It retries until every one exists or ctx
// ends; the server is ready only then, so that no client, nor the
// controllers' Lease in kube-system, meets them missing.
func (s *Server) ensureSystemNamespaces(ctx context.Context) error {
	if !s.registry.ServesNamespaces() {
		return nil
	}
	client, err := kubernetes.NewForConfig(s.loopbackConfig("apiloom-system-namespaces"))
	if err != nil {
		return fmt.Errorf("system namespaces: %w", err)
	}
	for _, name := range nslifecycle.Immortal {
		for {
			_, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
			if err == nil || apierrors.IsAlreadyExists(err) {
				break
			}
			s.log.Warn("creating a system namespace", "namespace", name, "err", err)
			select {
			case <-ctx.Done():
				return fmt.Errorf("system namespace %s: %w", name, ctx.Err())
			case <-time.After(systemNamespacesRetry):
			}
		}
	}
	return nil
}

// loopbackConfig reaches this server as its admin, from inside it (as
// runControllers's client does).
func (s *Server) loopbackConfig(userAgent string) *rest.Config {
	return &rest.Config{
		Host:        s.loopbackURL,
		BearerToken: s.token,
		// An operator's certificate need not name the loopback address;
		// the connection never leaves this host.
		TLSClientConfig: rest.TLSClientConfig{CAData: s.caPEM, Insecure: s.caPEM == nil},
		QPS:             -1, // in-process: the server's own limits apply, not a client's
		UserAgent:       userAgent,
	}
}
