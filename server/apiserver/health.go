package apiserver

import (
	"context"
	"net/http"
	"slices"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apiserver/pkg/server/healthz"

	"github.com/apiloom/apiloom/server/registry"
)

// healthHandler answers /healthz, /livez and /readyz with "ok" when etcd
// answers and every resource's storage is ready, like kube-apiserver's
// plain-text checks; /readyz waits for the RBAC authorizer (nil without
// RBAC) to have read every Role and binding, as kube-apiserver's waits for
// its RBAC informers. /healthz and /readyz also run checks (the KMS
// providers': encryption.go).
func healthHandler(client *clientv3.Client, served *registry.Served, rbac interface{ HasSynced() bool }, checks []healthz.HealthChecker) http.Handler {
	rbacSynced := func() bool { return rbac == nil || rbac.HasSynced() }
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if _, err := client.Get(ctx, "health", clientv3.WithCountOnly()); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte("etcd not reachable: " + err.Error() + "\n"))
			return
		}
		if r.URL.Path == "/readyz" && !served.Ready() {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte("watch caches not yet synced\n"))
			return
		}
		if r.URL.Path == "/readyz" && !rbacSynced() {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte("RBAC authorizer not yet synced\n"))
			return
		}
		if r.URL.Path != "/livez" {
			for _, c := range checks {
				if err := c.Check(r); err != nil {
					w.WriteHeader(http.StatusServiceUnavailable)
					_, _ = w.Write([]byte(c.Name() + " failed: " + err.Error() + "\n"))
					return
				}
			}
		}
		_, _ = w.Write([]byte("ok"))
	})
}

// healthPaths are the health checks: served without a token and exempt
// from the in-flight limits, so that a load balancer or kubelet sees a
// busy server as alive rather than as failing.
var healthPaths = []string{"/healthz", "/livez", "/readyz"}

func isHealthCheck(path string) bool { return slices.Contains(healthPaths, path) }
