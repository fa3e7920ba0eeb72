package robustness

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	"github.com/apiloom/apiloom/generated/clientset/versioned"
	"github.com/apiloom/apiloom/test/robustness/cluster"
	"github.com/apiloom/apiloom/test/robustness/traffic"
)

// The helpers of the controller scenarios (scenario_controllers_test.go):
// clients per replica, the controllers' Lease holder mapped to a replica,
// bulk creation, holds (finalizers the test removes), and etcd's keys of a
// namespace.

const (
	// leaseNamespace and leaseName are the controllers' Lease
	// (controllers.DefaultElection).
	leaseNamespace, leaseName = "kube-system", "apiloom-controllers"
	// holdFinalizer keeps an object whose deletion was requested until the
	// test removes it.
	holdFinalizer = "robustness.apiloom.dev/hold"
	// createParallelism is how many objects are created at once.
	createParallelism = 8
	// takeoverDeadline bounds the wait for the surviving replica to take
	// the Lease over from a killed holder: the Lease's 15 s duration, its
	// 2 s retry period, and slack for a loaded machine.
	takeoverDeadline = 45 * time.Second
	// finishDeadline bounds the wait for the controllers to finish once
	// nothing holds them any more (the namespace controller retries within
	// 8 s; the collector's rate limiter within seconds).
	finishDeadline = 90 * time.Second
)

// clients reach one replica; QPS unlimited, as the traffic's.
type clients struct {
	kube    kubernetes.Interface
	example versioned.Interface
}

func (s *scenario) replicaClients(i int) clients {
	s.t.Helper()
	cfg, err := s.c.Replicas[i].Config()
	if err != nil {
		s.t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 1000, 1000
	cfg.Timeout = 30 * time.Second // no watch goes through these clients
	return clients{kube: kubernetes.NewForConfigOrDie(cfg), example: versioned.NewForConfigOrDie(cfg)}
}

// leaseHolder is the replica whose current incarnation holds the
// controllers' Lease, and the Lease's holderIdentity. A replica's identity
// (hostname_uuid, one per incarnation) is in its log, which
// controllers.Run writes when it starts leading; -1 while the Lease names
// no running replica (none holds it yet, or the holder was killed and the
// Lease has not expired).
func (s *scenario) leaseHolder(ctx context.Context, c clients) (int, string, error) {
	l, err := c.kube.CoordinationV1().Leases(leaseNamespace).Get(ctx, leaseName, metav1.GetOptions{})
	if err != nil {
		return -1, "", err
	}
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
		return -1, "", nil
	}
	id := *l.Spec.HolderIdentity
	for i, r := range s.c.Replicas {
		log, err := r.Log()
		if err != nil {
			return -1, id, err
		}
		// Only the current incarnation's output counts: it follows the
		// log's last start line.
		last := strings.LastIndex(log, "==== "+r.Name+" start")
		if r.Running() && strings.Contains(log[max(last, 0):], id) {
			return i, id, nil
		}
	}
	return -1, id, nil
}

// waitLeaseHolder waits until the Lease names a running replica other than
// not (-1: any), read through c, and returns it.
func (s *scenario) waitLeaseHolder(ctx context.Context, c clients, not int, deadline time.Duration) (int, string) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	holder, id := -1, ""
	err := cluster.Until(ctx, "the controllers' Lease held by a running replica", func(ctx context.Context) (bool, error) {
		var err error
		holder, id, err = s.leaseHolder(ctx, c)
		if err != nil {
			return false, err
		}
		if holder >= 0 && holder != not {
			return true, nil
		}
		return false, fmt.Errorf("holderIdentity %q (replica %d)", id, holder)
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return holder, id
}

// createNamespace creates namespace name.
func createNamespace(ctx context.Context, c clients, name string) error {
	_, err := c.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	return err
}

// newDatabase is a valid Database named name in ns.
func newDatabase(ns, name string, finalizers []string, owners ...metav1.OwnerReference) *examplev1.Database {
	return &examplev1.Database{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Finalizers: finalizers, OwnerReferences: owners},
		Spec:       examplev1.DatabaseSpec{Engine: "postgres", Version: "16"},
	}
}

// newConfigMap is a ConfigMap named name in ns.
func newConfigMap(ns, name string, finalizers []string, owners ...metav1.OwnerReference) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Finalizers: finalizers, OwnerReferences: owners},
		Data: map[string]string{"k": name}}
}

// createAll creates objs (Databases and ConfigMaps) through c,
// createParallelism at a time, and returns the first error.
func createAll(ctx context.Context, c clients, objs []metav1.Object) error {
	var mu sync.Mutex // guards first
	var first error
	workqueue.ParallelizeUntil(ctx, createParallelism, len(objs), func(i int) {
		var err error
		switch o := objs[i].(type) {
		case *examplev1.Database:
			_, err = c.example.ExampleV1().Databases(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *corev1.ConfigMap:
			_, err = c.kube.CoreV1().ConfigMaps(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		default:
			err = fmt.Errorf("createAll: %T", o)
		}
		if err != nil {
			mu.Lock()
			if first == nil {
				first = fmt.Errorf("create %s/%s: %w", objs[i].GetNamespace(), objs[i].GetName(), err)
			}
			mu.Unlock()
		}
	})
	if first == nil {
		first = ctx.Err()
	}
	return first
}

// release removes holdFinalizer from the Database or ConfigMap obj (a
// merge patch of its finalizers; none else are used); gone is no error.
func release(ctx context.Context, c clients, obj metav1.Object) error {
	patch := []byte(`{"metadata":{"finalizers":null}}`)
	var err error
	switch obj.(type) {
	case *examplev1.Database:
		_, err = c.example.ExampleV1().Databases(obj.GetNamespace()).Patch(ctx, obj.GetName(), types.MergePatchType, patch, metav1.PatchOptions{})
	case *corev1.ConfigMap:
		_, err = c.kube.CoreV1().ConfigMaps(obj.GetNamespace()).Patch(ctx, obj.GetName(), types.MergePatchType, patch, metav1.PatchOptions{})
	default:
		err = fmt.Errorf("release: %T", obj)
	}
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// etcdKey is one key of etcd under /registry/ naming an object of a
// namespace: its resource (the segment before the namespace) and name.
type etcdKey struct {
	Resource, Name string
	// ModRevision is the revision of the key's last change.
	ModRevision int64
}

// namespaceKeys reads etcd's keys of objects in namespace ns (and the
// namespace's own key, resource "namespaces"), straight from etcd.
func namespaceKeys(ctx context.Context, etcd *clientv3.Client, ns string) ([]etcdKey, error) {
	resp, err := etcd.Get(ctx, "/registry/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return nil, err
	}
	var out []etcdKey
	for _, kv := range resp.Kvs {
		parts := strings.Split(string(kv.Key), "/")
		i := slices.Index(parts, ns)
		switch {
		case i < 1:
		case i == len(parts)-1 && parts[i-1] == "namespaces":
			out = append(out, etcdKey{Resource: "namespaces", Name: ns, ModRevision: kv.ModRevision})
		case i == len(parts)-2:
			out = append(out, etcdKey{Resource: parts[i-1], Name: parts[i+1], ModRevision: kv.ModRevision})
		}
	}
	return out, nil
}

// deleteRevisions are the revisions at which etcd deleted each key of
// namespace ns ("resource/name"), read from etcd's history.
func deleteRevisions(ctx context.Context, etcd *clientv3.Client, ns string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, prefix := range []string{"/registry/configmaps/" + ns + "/", "/registry/example.apiloom.dev/databases/" + ns + "/"} {
		hist, err := readDeletes(ctx, etcd, prefix)
		if err != nil {
			return nil, err
		}
		res := "configmaps"
		if strings.Contains(prefix, "databases") {
			res = "databases"
		}
		for name, rev := range hist {
			out[res+"/"+name] = rev
		}
	}
	return out, nil
}

// readDeletes maps each name under prefix that etcd's history deletes to
// the revision of its last delete.
func readDeletes(ctx context.Context, etcd *clientv3.Client, prefix string) (map[string]int64, error) {
	hist, err := traffic.ReadHistory(ctx, etcd, prefix)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, ch := range hist {
		if ch.Type == watch.Deleted {
			out[ch.Name] = ch.Revision
		}
	}
	return out, nil
}

// failover kills replica holder, the Lease holder, holds the fault (the
// other replica serves on), restarts it on its data, and waits until the
// other replica holds the Lease, read through c (the other's clients).
//
// The restarted replica cannot win the Lease first: client-go's leader
// election lets a candidate take a Lease only LeaseDuration (15 s) after
// it last saw the Lease change (leaderelection.go isLeaseValid), and
// candidates poll every RetryPeriod (2 s) with JitterFactor 1.2, so up to
// 4.4 s apart. The survivor saw the killed holder's last renewal at most
// 4.4 s after the kill and takes the Lease at most 15 + 4.4 s after that;
// the restarted replica first reads the Lease faultHold (10 s) after the
// kill or later, and could not take it before 25 s.
func (s *scenario) failover(ctx context.Context, c clients, holder int) {
	s.t.Helper()
	killed := time.Now()
	s.kill(ctx, s.c.Replicas[holder].Process)
	s.hold(ctx, 1-holder)
	if err := s.c.Replicas[holder].Start(); err != nil {
		s.t.Fatal(err)
	}
	if err := s.c.Replicas[holder].WaitReady(ctx); err != nil {
		s.t.Fatal(err)
	}
	s.faultEnd()
	got, id := s.waitLeaseHolder(ctx, c, -1, takeoverDeadline)
	if got != 1-holder {
		s.t.Fatalf("the restarted replica %d took the Lease (%q), not the survivor", got, id)
	}
	s.t.Logf("replica %d took the Lease over as %q %v after the kill", got, id, time.Since(killed).Round(time.Millisecond))
}
