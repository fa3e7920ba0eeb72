package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"github.com/apiloom/apiloom/generated/apiserver"
	"github.com/apiloom/apiloom/generated/clientset/versioned"
	"github.com/apiloom/apiloom/server/testserver"
)

// startServer starts a server for the example group and returns a clientset for it.
func startServer(t *testing.T, opts ...testserver.Option) (*testserver.TestServer, versioned.Interface) {
	t.Helper()
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
// labels, from the server's /metrics.
func metric(t *testing.T, cfg *rest.Config, name string, labels ...string) float64 {
	t.Helper()
	var sum float64
lines:
	for _, line := range strings.Split(metricsText(t, cfg), "\n") {
		if !strings.HasPrefix(line, name+"{") {
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
