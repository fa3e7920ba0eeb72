package apiserver

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/apiloom/apiloom/server/admission/nslifecycle"
)

// systemNamespacesRetry is the pause between attempts to create a system
// namespace that could not be created at start.
const systemNamespacesRetry = time.Second

// ensureSystemNamespaces makes sure default, kube-system and kube-public
// exist, as kube-apiserver's system namespaces controller does, when
// namespaces are served: through this server (loopback), so they are
// defaulted and admitted as any client's, and idempotently, so replicas
// starting on one etcd together all succeed. It is called before the
// server is ready, so that no client, nor the controllers' Lease in
// kube-system, meets them missing; those it could not create (a server
// that starts read-only on a full disk) it retries in the background
// until ctx ends, owned by wg.
func (s *Server) ensureSystemNamespaces(ctx context.Context, wg *sync.WaitGroup) error {
	if !s.registry.ServesNamespaces() {
		return nil
	}
	client, err := kubernetes.NewForConfig(s.loopbackConfig("apiloom-system-namespaces"))
	if err != nil {
		return fmt.Errorf("system namespaces: %w", err)
	}
	var missing []string
	for _, name := range nslifecycle.Immortal {
		if err := ensureNamespace(ctx, client, name); err != nil {
			s.log.Warn("creating a system namespace; retrying in the background", "namespace", name, "err", err)
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for len(missing) > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(systemNamespacesRetry):
			}
			if ensureNamespace(ctx, client, missing[0]) == nil {
				missing = missing[1:]
			}
		}
	}()
	return nil
}

// ensureNamespace creates the namespace name unless it exists.
func ensureNamespace(ctx context.Context, client kubernetes.Interface, name string) error {
	if _, err := client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{}); err == nil {
		return nil
	}
	_, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
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
