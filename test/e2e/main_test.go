package e2e

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"github.com/apiloom/apiloom/generated/apiserver"
	"github.com/apiloom/apiloom/generated/clientset/versioned"
	apiloomserver "github.com/apiloom/apiloom/server/apiserver"
	"github.com/apiloom/apiloom/server/testserver"
)

// http2ServerEnv names the HTTP/2 implementation (--http2-server) of every
// server the suite starts: unset or "apiloom" for our own, "go" for Go's.
// make test runs the suite both ways.
const http2ServerEnv = "APILOOM_E2E_HTTP2_SERVER"

// http2Server is the implementation under test, from http2ServerEnv.
func http2Server(t *testing.T) string {
	t.Helper()
	switch v := os.Getenv(http2ServerEnv); v {
	case "":
		return apiloomserver.HTTP2ServerApiloom
	case apiloomserver.HTTP2ServerApiloom, apiloomserver.HTTP2ServerGo:
		return v
	default:
		t.Fatalf("%s=%q: want %q or %q", http2ServerEnv, v, apiloomserver.HTTP2ServerApiloom, apiloomserver.HTTP2ServerGo)
		return ""
	}
}

// etcdServersEnv names an external etcd (or kine) for the servers
// startServer and startBinary start, as a comma-separated --etcd-servers
// list; unset, each has its own embedded etcd. make test-postgres sets it
// to a kine on PostgreSQL and runs the suite's core (hack/test-postgres.sh).
// Each test's servers store their objects under a key prefix of their own
// (etcdPrefix), so tests sharing one backend, in parallel or one after
// another, in one run or several, never see each other's objects.
const etcdServersEnv = "APILOOM_E2E_ETCD_SERVERS"

// externalEtcd is the --etcd-servers list of etcdServersEnv, nil when unset.
func externalEtcd() []string {
	v := os.Getenv(etcdServersEnv)
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

// runID tells this run's keys from those of earlier runs on the same
// external backend.
var runID = rand.Text()[:8]

// etcdPrefix is the --etcd-prefix of t's servers on an external backend:
// one per test and run, the same for every server the test starts (a
// restart finds its objects again). It holds no "/" but the first, so no
// test's prefix is a prefix of another's keys.
func etcdPrefix(t *testing.T) string {
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, t.Name())
	return "/e2e-" + runID + "-" + name
}

// backendOptions puts a server on the external backend of etcdServersEnv,
// under t's etcdPrefix; none without one (embedded etcd).
func backendOptions(t *testing.T) []testserver.Option {
	servers := externalEtcd()
	if servers == nil {
		return nil
	}
	return []testserver.Option{testserver.WithEtcd(servers...), testserver.WithEtcdPrefix(etcdPrefix(t))}
}

// startServer starts a server for the example group, serving HTTP/2 with
// http2Server and storing in the backend of etcdServersEnv unless opts say
// otherwise, and returns a clientset for it.
func startServer(t *testing.T, opts ...testserver.Option) (*testserver.TestServer, versioned.Interface) {
	t.Helper()
	opts = append(append([]testserver.Option{testserver.WithHTTP2Server(http2Server(t))}, backendOptions(t)...), opts...)
	ts := testserver.Start(t, apiserver.Install, opts...)
	return ts, versioned.NewForConfigOrDie(ts.Config)
}

// eventually polls cond until it holds, failing the test after 30s.
func eventually(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var lastErr error
	err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 30*time.Second, true,
		func(ctx context.Context) (bool, error) {
			ok, err := cond(ctx)
			lastErr = err
			return ok, nil
		})
	if err != nil {
		t.Fatalf("timed out waiting for %s (last error: %v)", what, lastErr)
	}
}

// metric sums the samples of name whose labels contain every one of
// labels (a metric without labels has one sample), from the server's
// /metrics.
func metric(t *testing.T, cfg *rest.Config, name string, labels ...string) float64 {
	t.Helper()
	var sum float64
lines:
	for _, line := range strings.Split(metricsText(t, cfg), "\n") {
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		for _, l := range labels {
			if !strings.Contains(line, l) {
				continue lines
			}
		}
		var v float64
		f := strings.Fields(line)
		if _, err := fmt.Sscan(f[len(f)-1], &v); err == nil {
			sum += v
		}
	}
	return sum
}

// metricsText is the server's /metrics.
func metricsText(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	body, err := restClient(t, cfg).Get().AbsPath("/metrics").DoRaw(t.Context())
	if err != nil {
		t.Fatalf("metrics: %v", err)
	}
	return string(body)
}

// restClient reaches the server's non-resource paths (/metrics, /readyz).
func restClient(t *testing.T, cfg *rest.Config) *rest.RESTClient {
	t.Helper()
	c := rest.CopyConfig(cfg)
	c.NegotiatedSerializer = versionedCodecs()
	rc, err := rest.UnversionedRESTClientFor(c)
	if err != nil {
		t.Fatal(err)
	}
	return rc
}
