package e2e

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/apiloom/apiloom/server/apiserver"
	"github.com/apiloom/apiloom/server/testserver"
)

// TestDeleteCollectionWorkersEndToEnd: with --delete-collection-workers
// 4, client-go's DeleteCollection deletes what its label selector picks
// and nothing else, and a namespace of several hundred objects is emptied
// by the namespace controller's deletecollection and goes.
func TestDeleteCollectionWorkersEndToEnd(t *testing.T) {
	ts, _ := startServer(t, testserver.WithBuiltinAPIs("namespaces", "configmaps", "leases"), testserver.WithAuthorizationModes("AlwaysAllow"),
		func(o *apiserver.Options) { o.DeleteCollectionWorkers = 4 })
	kc := kubernetes.NewForConfigOrDie(ts.Config)
	ctx := t.Context()
	const ns, n = "dcw", 400
	if _, err := kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		tier := []string{"a", "b"}[i%2]
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%04d", i), Labels: map[string]string{"tier": tier}}}
		if _, err := kc.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := kc.CoreV1().ConfigMaps(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "tier=a"}); err != nil {
		t.Fatal(err)
	}
	left, err := kc.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(left.Items) != n/2 {
		t.Fatalf("%d ConfigMaps left, want the %d of tier b", len(left.Items), n/2)
	}
	for _, cm := range left.Items {
		if cm.Labels["tier"] != "b" {
			t.Fatalf("left %s of tier %s", cm.Name, cm.Labels["tier"])
		}
	}
	if err := kc.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitNamespaceGone(t, kc, ns)
}
