package e2e

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/generated/clientset/versioned"
	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/testserver"
)

// TestCompaction runs the server's compactor every 500ms against an etcd
// the test can inspect. Once old history is gone from etcd, reads that
// need it from etcd get 410 Expired, while a watch opened before keeps
// delivering every change, and lists and writes keep working; with the
// watch cache on and off.
func TestCompaction(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cache bool
	}{{"cache", true}, {"no-cache", false}} {
		t.Run(tc.name, func(t *testing.T) {
			etcd := etcdtest.Start(t)
			opts := []testserver.Option{
				testserver.WithEtcd(etcd.Endpoints()...),
				testserver.WithCompactionInterval(500 * time.Millisecond),
			}
			if !tc.cache {
				opts = append(opts, testserver.WithoutWatchCache())
			}
			ts, cs := startServer(t, opts...)
			ts.CreateNamespaces(t, "shop")
			testCompaction(t, cs, etcd, tc.cache)
		})
	}
}

func testCompaction(t *testing.T, cs versioned.Interface, etcd *clientv3.Client, cache bool) {
	ctx := t.Context()
	dbs := cs.ExampleV1().Databases("shop")
	first, err := dbs.Create(ctx, newDatabase("orders"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A watch opened before compaction lives through it.
	live, err := dbs.Watch(ctx, metav1.ListOptions{ResourceVersion: first.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Stop()

	// Keep writing until the server's compactor has removed the revision
	// after the first write's from etcd: a watch from first's
	// resourceVersion starts there, and is still served while it is kept
	// (compaction keeps the revision it compacts at).
	firstRev := atoi(t, first.ResourceVersion)
	n := 0
	eventually(t, "etcd history to be compacted", func(ctx context.Context) (bool, error) {
		n++
		d, err := dbs.Get(ctx, "orders", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		d.Spec.Version = fmt.Sprint(n)
		if _, err := dbs.Update(ctx, d, metav1.UpdateOptions{}); err != nil {
			return false, err
		}
		_, err = etcd.Get(ctx, "/", clientv3.WithRev(firstRev+1))
		return errors.Is(err, rpctypes.ErrCompacted), err
	})

	if !cache {
		// Served by etcd: an exact list or a watch from before compaction
		// is told to relist. (The cache still holds that history in its
		// event window, and serves both from memory.)
		_, err := dbs.List(ctx, metav1.ListOptions{ResourceVersion: first.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		if !apierrors.IsResourceExpired(err) {
			t.Fatalf("exact list at a compacted revision: %v, want 410 Expired", err)
		}
		w, err := dbs.Watch(ctx, metav1.ListOptions{ResourceVersion: first.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		ev := <-w.ResultChan()
		w.Stop()
		if st, ok := ev.Object.(*metav1.Status); ev.Type != watch.Error || !ok || st.Code != 410 {
			t.Fatalf("watch from a compacted revision: %s %v, want ERROR 410", ev.Type, ev.Object)
		}
	}

	// The watch opened before compaction saw every update, in order.
	for i := 1; i <= n; i++ {
		select {
		case ev := <-live.ResultChan():
			if ev.Type != watch.Modified {
				t.Fatalf("event %d: %s %v", i, ev.Type, ev.Object)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("live watch stalled after %d of %d updates", i-1, n)
		}
	}
	// Consistent reads and new writes work after compaction.
	if _, err := dbs.Create(ctx, newDatabase("after"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	l, err := dbs.List(ctx, metav1.ListOptions{})
	if err != nil || len(l.Items) != 2 {
		t.Fatalf("list after compaction: %v %d items", err, len(l.Items))
	}
}
