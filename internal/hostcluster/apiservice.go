package hostcluster

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// apiServices is the aggregator's resource; read through the dynamic
// client so the harness needs no k8s.io/kube-aggregator dependency.
var apiServices = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// WaitAPIServiceAvailable waits until the APIService name has condition
// Available=True, that is, until the aggregator reaches the server behind
// it and finds it healthy. After timeout it ends t with the condition's
// reason and message.
func (c *Cluster) WaitAPIServiceAvailable(t testing.TB, name string, timeout time.Duration) {
	t.Helper()
	if err := c.waitAPIServiceAvailable(t.Context(), name, timeout); err != nil {
		t.Fatal(err)
	}
}

func (c *Cluster) waitAPIServiceAvailable(ctx context.Context, name string, timeout time.Duration) error {
	client, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	// Each read has its own timeout, not the wait's deadline, so the last
	// read before the deadline is a whole one and its answer is reported.
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		readCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		available, last, err := apiServiceAvailable(readCtx, client, name)
		cancel()
		if err != nil {
			last = err.Error()
		} else if available {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("APIService %s: %w (last: %s)", name, ctx.Err(), last)
		case <-deadline.C:
			return fmt.Errorf("APIService %s not Available within %v: %s", name, timeout, last)
		case <-tick.C:
		}
	}
}

// apiServiceAvailable reports whether the APIService's Available condition
// is True, and otherwise describes it.
func apiServiceAvailable(ctx context.Context, client dynamic.Interface, name string) (bool, string, error) {
	obj, err := client.Resource(apiServices).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, "", err
	}
	conds, _, err := unstructured.NestedSlice(obj.Object, "status", "conditions")
	if err != nil {
		return false, "", err
	}
	for _, cond := range conds {
		m, ok := cond.(map[string]any)
		if !ok || m["type"] != "Available" {
			continue
		}
		if m["status"] == "True" {
			return true, "", nil
		}
		return false, fmt.Sprintf("Available=%v: %v: %v", m["status"], m["reason"], m["message"]), nil
	}
	return false, "no Available condition yet", nil
}
