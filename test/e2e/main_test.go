package e2e

import (
	"context"
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

// startServer starts a server for the example group, serving HTTP/2 with
// http2Server unless opts say otherwise, and returns a clientset for it.
func startServer(t *testing.T, opts ...testserver.Option) (*testserver.TestServer, versioned.Interface) {
	t.Helper()
	opts = append([]testserver.Option{testserver.WithHTTP2Server(http2Server(t))}, opts...)
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
