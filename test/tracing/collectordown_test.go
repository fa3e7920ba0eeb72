package tracing

import (
	"fmt"
	"net"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/apiloom/apiloom/generated/apiserver"
	"github.com/apiloom/apiloom/server/testserver"
)

// TestCollectorDownDoesNotBlockRequests: with every request sampled and
// the collector unreachable, the exporter's batches fail and its queue
// (here 16 spans, so that it is full at once) drops spans instead of
// making requests wait: no create takes longer than untraced creates
// would by far, and shutdown gives up on the unsent spans after its
// flush timeout instead of retrying for the exporter's minute.
func TestCollectorDownDoesNotBlockRequests(t *testing.T) {
	t.Setenv("OTEL_BSP_MAX_QUEUE_SIZE", "16")
	t.Setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "16")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := ln.Addr().String()
	_ = ln.Close() // nothing listens there now: every export is refused

	const creates = 200
	var served time.Time
	t.Run("serve", func(t *testing.T) {
		ts := testserver.Start(t, apiserver.Install, withTracingConfig(writeConfig(t, down)))
		ts.CreateNamespaces(t, "traced")
		var p propagating
		kc := tracedClient(t, ts.Config, &p)
		var slowest time.Duration
		start := time.Now()
		for i := range creates {
			p.set(newClientSpan())
			begin := time.Now()
			createConfigMap(t, kc, fmt.Sprintf("c-%d", i))
			slowest = max(slowest, time.Since(begin))
		}
		t.Logf("%d traced creates with the collector down: %v, slowest %v", creates, time.Since(start), slowest)
		// A blocked request would wait for the exporter's gRPC dial and
		// retries (seconds); a create takes milliseconds.
		if slowest > 2*time.Second {
			t.Errorf("a create took %v with the collector down", slowest)
		}
		served = time.Now()
	})
	// The subtest's cleanup stopped the server: its requests drained in
	// milliseconds, so this is the tracing flush's bound at most.
	if stop := time.Since(served); stop > 15*time.Second {
		t.Errorf("the server took %v to stop with the collector down", stop)
	} else {
		t.Logf("stopped in %v", stop)
	}
}

func createConfigMap(t *testing.T, kc *kubernetes.Clientset, name string) {
	t.Helper()
	if _, err := kc.CoreV1().ConfigMaps("traced").Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
