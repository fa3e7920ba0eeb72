package e2e

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/testserver"
)

// TestGCResumesAfterRestart: a server stops in the middle of collecting
// (an owner waiting in the foreground for a dependent that cannot go yet;
// a chain whose middle link is being deleted); the server started on the
// same data rebuilds the graph and finishes both.
func TestGCResumesAfterRestart(t *testing.T) {
	dir := t.TempDir()
	const ns = "gc-restart"
	t.Run("first server", func(t *testing.T) {
		e := newGCEnv(t, testserver.WithDataDir(dir))
		ctx := t.Context()
		e.namespace(ns)
		owner := e.database(ns, "owner")
		hold(t, e, e.configMap(ns, "held", dbRef(owner, true)))
		for i := range 10 {
			e.configMap(ns, fmt.Sprintf("dep-%d", i), dbRef(owner, false))
		}
		bg := e.database(ns, "bg")
		middle := e.configMap(ns, "middle", dbRef(bg, false))
		hold(t, e, middle)
		e.configMap(ns, "grand", cmRef(middle, false))

		if err := e.cs.ExampleV1().Databases(ns).Delete(ctx, "owner", policy(metav1.DeletePropagationForeground)); err != nil {
			t.Fatal(err)
		}
		if err := e.cs.ExampleV1().Databases(ns).Delete(ctx, "bg", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"held", "middle"} {
			eventually(t, "the collector to delete "+name, func(ctx context.Context) (bool, error) {
				cm, err := e.getCM(ctx, ns, name)
				return cm != nil && cm.DeletionTimestamp != nil, err
			})
		}
	}) // the first server stops here

	e := newGCEnv(t, testserver.WithDataDir(dir))
	if db, err := e.getDB(t.Context(), ns, "owner"); err != nil || db == nil || db.DeletionTimestamp == nil {
		t.Fatalf("owner after the restart: %v %+v", err, db)
	}
	e.mustCM(ns, "grand")
	releaseHold(t, e, ns, "held")
	releaseHold(t, e, ns, "middle")
	e.waitDBGone(ns, "owner")
	e.waitCMGone(ns, "held", "middle", "grand")
	for i := range 10 {
		e.waitCMGone(ns, fmt.Sprintf("dep-%d", i))
	}
}

// hold gives cm a finalizer of its own, so that deleting it only marks it.
func hold(t *testing.T, e *gcEnv, cm *corev1.ConfigMap) {
	t.Helper()
	c := e.mustCM(cm.Namespace, cm.Name)
	c.Finalizers = append(c.Finalizers, "example.com/hold")
	if _, err := e.kc.CoreV1().ConfigMaps(c.Namespace).Update(t.Context(), c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestGCReplicasCollectOnce: two replicas on one etcd; only the one holding
// the controllers' Lease collects, and each dependent is deleted once.
func TestGCReplicasCollectOnce(t *testing.T) {
	etcd := etcdtest.StartServer(t)
	endpoint := "http://" + etcd.Clients[0].Addr().String()
	a := newGCEnv(t, testserver.WithEtcd(endpoint))
	b := newGCEnv(t, testserver.WithEtcd(endpoint))
	const ns, n = "gc-replicas", 30
	a.namespace(ns)
	owner := a.region("gc-replicas")
	for i := range n {
		a.database(ns, fmt.Sprintf("d%d", i), regionRef(owner, false))
	}
	deletes := func(e *gcEnv) float64 {
		return metric(t, e.ts.Config, "apiloom_request_duration_seconds_count", `verb="delete"`, `resource="databases"`)
	}
	beforeA, beforeB := deletes(a), deletes(b)
	if err := b.cs.ExampleV1().Regions().Delete(t.Context(), "gc-replicas", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "every dependent to be collected", func(ctx context.Context) (bool, error) {
		list, err := a.cs.ExampleV1().Databases(ns).List(ctx, metav1.ListOptions{})
		return err == nil && len(list.Items) == 0, err
	})
	// A DELETE is counted once its handler returns, which may be after
	// the cache the list read showed the object gone.
	var da, db float64
	eventually(t, "every DELETE to be counted", func(context.Context) (bool, error) {
		da, db = deletes(a)-beforeA, deletes(b)-beforeB
		return da+db >= n, nil
	})
	if da+db != n || (da != 0 && db != 0) {
		t.Fatalf("DELETEs of dependents: %v through a, %v through b; want %d through one of them", da, db, n)
	}
}
