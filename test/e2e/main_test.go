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

// requestCount reads how many requests of verb on resource the server has
// answered, from its /metrics.
func requestCount(t *testing.T, cfg *rest.Config, verb, resource string) int {
	t.Helper()
	c := rest.CopyConfig(cfg)
	c.NegotiatedSerializer = versionedCodecs()
	rc, err := rest.UnversionedRESTClientFor(c)
	if err != nil {
		t.Fatal(err)
	}
	body, err := rc.Get().AbsPath("/metrics").DoRaw(t.Context())
	if err != nil {
		t.Fatalf("metrics: %v", err)
	}
	n := 0
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "apiloom_request_duration_seconds_count{") &&
			strings.Contains(line, `verb="`+verb+`"`) && strings.Contains(line, `resource="`+resource+`"`) {
			var v float64
			f := strings.Fields(line)
			if _, err := fmt.Sscan(f[len(f)-1], &v); err == nil {
				n += int(v)
			}
		}
	}
	return n
}
