package e2e

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	"github.com/apiloom/apiloom/generated/clientset/versioned"
	"github.com/apiloom/apiloom/server/testserver"
)

// gcEnv is a server with its garbage collector, and clients of the
// built-in kinds (ConfigMaps) and of the example group (Databases,
// Regions), the owners and dependents of the collector's tests.
type gcEnv struct {
	t  *testing.T
	ts *testserver.TestServer
	kc kubernetes.Interface
	cs versioned.Interface
}

func newGCEnv(t *testing.T, opts ...testserver.Option) *gcEnv {
	t.Helper()
	ts, cs := startServer(t, opts...)
	return &gcEnv{t: t, ts: ts, kc: kubernetes.NewForConfigOrDie(ts.Config), cs: cs}
}

// namespace creates namespace name (a write into a missing namespace is
// refused once namespace lifecycle is enforced).
func (e *gcEnv) namespace(name string) {
	e.t.Helper()
	_, err := e.kc.CoreV1().Namespaces().Create(e.t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		e.t.Fatal(err)
	}
}

// ownerRefTo is a reference to o, of apiVersion and kind, blocking its owner's
// foreground deletion when block is set.
func ownerRefTo(o metav1.Object, apiVersion, kind string, block bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: o.GetName(), UID: o.GetUID(), BlockOwnerDeletion: &block}
}

func cmRef(cm *corev1.ConfigMap, block bool) metav1.OwnerReference {
	return ownerRefTo(cm, "v1", "ConfigMap", block)
}

func dbRef(db *examplev1.Database, block bool) metav1.OwnerReference {
	return ownerRefTo(db, "example.apiloom.dev/v1", "Database", block)
}

func regionRef(r *examplev1.Region, block bool) metav1.OwnerReference {
	return ownerRefTo(r, "example.apiloom.dev/v1", "Region", block)
}

// configMap creates a ConfigMap owned by owners.
func (e *gcEnv) configMap(ns, name string, owners ...metav1.OwnerReference) *corev1.ConfigMap {
	e.t.Helper()
	cm, err := e.kc.CoreV1().ConfigMaps(ns).Create(e.t.Context(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: owners},
		Data:       map[string]string{"k": "v"},
	}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("create configmap %s/%s: %v", ns, name, err)
	}
	return cm
}

// database creates a Database owned by owners.
func (e *gcEnv) database(ns, name string, owners ...metav1.OwnerReference) *examplev1.Database {
	e.t.Helper()
	db := newDatabase(name)
	db.OwnerReferences = owners
	got, err := e.cs.ExampleV1().Databases(ns).Create(e.t.Context(), db, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("create database %s/%s: %v", ns, name, err)
	}
	return got
}

// region creates a Region (cluster-scoped).
func (e *gcEnv) region(name string) *examplev1.Region {
	e.t.Helper()
	r, err := e.cs.ExampleV1().Regions().Create(e.t.Context(), &examplev1.Region{
		ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: examplev1.RegionSpec{Provider: "aws"},
	}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// getCM reads a ConfigMap; nil when there is none.
func (e *gcEnv) getCM(ctx context.Context, ns, name string) (*corev1.ConfigMap, error) {
	cm, err := e.kc.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return cm, err
}

// getDB reads a Database; nil when there is none.
func (e *gcEnv) getDB(ctx context.Context, ns, name string) (*examplev1.Database, error) {
	db, err := e.cs.ExampleV1().Databases(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return db, err
}

// waitCMGone waits until the ConfigMaps named are gone.
func (e *gcEnv) waitCMGone(ns string, names ...string) {
	e.t.Helper()
	for _, n := range names {
		eventually(e.t, "configmap "+ns+"/"+n+" to be collected", func(ctx context.Context) (bool, error) {
			cm, err := e.getCM(ctx, ns, n)
			return cm == nil && err == nil, err
		})
	}
}

// waitDBGone waits until the Databases named are gone.
func (e *gcEnv) waitDBGone(ns string, names ...string) {
	e.t.Helper()
	for _, n := range names {
		eventually(e.t, "database "+ns+"/"+n+" to be collected", func(ctx context.Context) (bool, error) {
			db, err := e.getDB(ctx, ns, n)
			return db == nil && err == nil, err
		})
	}
}

// mustCM reads a ConfigMap that must exist.
func (e *gcEnv) mustCM(ns, name string) *corev1.ConfigMap {
	e.t.Helper()
	cm, err := e.getCM(e.t.Context(), ns, name)
	if err != nil || cm == nil {
		e.t.Fatalf("configmap %s/%s: %v (gone: %v)", ns, name, err, cm == nil)
	}
	return cm
}

func policy(p metav1.DeletionPropagation) metav1.DeleteOptions {
	return metav1.DeleteOptions{PropagationPolicy: &p}
}

// refUIDs are the UIDs refs name, in order.
func refUIDs(refs []metav1.OwnerReference) []types.UID {
	out := []types.UID{}
	for _, r := range refs {
		out = append(out, r.UID)
	}
	return out
}
