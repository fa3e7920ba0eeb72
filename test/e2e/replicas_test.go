package e2e

import (
	"context"
	"strconv"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/testserver"
)

// TestReplicasShareOneEtcd runs two servers on one external etcd: a write
// through one is read back consistently and watched through the other.
func TestReplicasShareOneEtcd(t *testing.T) {
	etcd := etcdtest.StartServer(t)
	endpoint := "http://" + etcd.Clients[0].Addr().String()
	ta, a := startServer(t, testserver.WithEtcd(endpoint))
	_, b := startServer(t, testserver.WithEtcd(endpoint))
	ta.CreateNamespaces(t, "shop")
	ctx := t.Context()

	w, err := b.ExampleV1().Databases("shop").Watch(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	created, err := a.ExampleV1().Databases("shop").Create(ctx, newDatabase("orders"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A consistent read through the other replica sees the write at once.
	got, err := b.ExampleV1().Databases("shop").Get(ctx, "orders", metav1.GetOptions{})
	if err != nil || got.UID != created.UID {
		t.Fatalf("replica b: %v %+v", err, got)
	}
	list, err := b.ExampleV1().Databases("shop").List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || atoi(t, list.ResourceVersion) < atoi(t, created.ResourceVersion) {
		t.Fatalf("replica b list: %v %+v", err, list)
	}
	eventually(t, "replica b's watch to see the write", func(context.Context) (bool, error) {
		select {
		case ev := <-w.ResultChan():
			return ev.Type == watch.Added, nil
		default:
			return false, nil
		}
	})
	// An update through b conflicts on a's stale resourceVersion.
	got.Spec.Replicas = 1
	if _, err := b.ExampleV1().Databases("shop").Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	created.Spec.Replicas = 2
	if _, err := a.ExampleV1().Databases("shop").Update(ctx, created, metav1.UpdateOptions{}); err == nil {
		t.Fatal("stale update through replica a succeeded")
	}
}

func atoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion %q: %v", s, err)
	}
	return n
}
