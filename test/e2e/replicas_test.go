package e2e

import (
	"context"
	"slices"
	"strconv"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/testserver"
)

// TestReplicasShareOneEtcd runs two servers on one external etcd (the
// suite's, etcdServersEnv, when set; its own otherwise): a write through
// one is read back consistently and watched through the other.
func TestReplicasShareOneEtcd(t *testing.T) {
	var shared []testserver.Option // startServer's backendOptions, with the same prefix for both
	if externalEtcd() == nil {
		etcd := etcdtest.StartServer(t)
		shared = append(shared, testserver.WithEtcd("http://"+etcd.Clients[0].Addr().String()))
	}
	ta, a := startServer(t, shared...)
	_, b := startServer(t, shared...)
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

// TestPrefixesKeepServersApart runs two servers on one etcd under
// different --etcd-prefix values, as the suite does on a shared backend:
// neither sees the other's objects, namespaces or controllers' Lease, and
// each has its own system namespaces.
func TestPrefixesKeepServersApart(t *testing.T) {
	var shared []testserver.Option
	if externalEtcd() == nil {
		etcd := etcdtest.StartServer(t)
		shared = append(shared, testserver.WithEtcd("http://"+etcd.Clients[0].Addr().String()))
	}
	prefix := etcdPrefix(t)
	ta, a := startServer(t, append(shared, testserver.WithEtcdPrefix(prefix+"-a"))...)
	tb, b := startServer(t, append(shared, testserver.WithEtcdPrefix(prefix+"-b"))...)
	ta.CreateNamespaces(t, "shop")
	ctx := t.Context()
	if _, err := a.ExampleV1().Databases("shop").Create(ctx, newDatabase("orders"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.ExampleV1().Databases("shop").Get(ctx, "orders", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("server b reads server a's object: %v", err)
	}
	if l, err := b.ExampleV1().Databases("").List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Fatalf("server b lists %v: %v", l, err)
	}
	holders := map[string]bool{}
	for name, ts := range map[string]*testserver.TestServer{"a": ta, "b": tb} {
		client := kubernetes.NewForConfigOrDie(ts.Config)
		// Each server leads its own controllers: one Lease per prefix.
		eventually(t, "server "+name+" to hold its controllers' Lease", func(ctx context.Context) (bool, error) {
			l, err := client.CoordinationV1().Leases("kube-system").Get(ctx, "apiloom-controllers", metav1.GetOptions{})
			if err != nil || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
				return false, err
			}
			holders[*l.Spec.HolderIdentity] = true
			return true, nil
		})
		core := client.CoreV1()
		nss, err := core.Namespaces().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, ns := range nss.Items {
			names = append(names, ns.Name)
		}
		want := []string{"default", "kube-public", "kube-system"}
		if name == "a" {
			want = append(want, "shop")
		}
		slices.Sort(want)
		if !slices.Equal(names, want) {
			t.Errorf("server %s lists the namespaces %q, want %q", name, names, want)
		}
	}
	if len(holders) != 2 {
		t.Errorf("the two servers' Leases name the holders %v, want two", holders)
	}
}
