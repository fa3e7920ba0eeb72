// Package serviceaccount holds two of kube-controller-manager's loops, run
// inside the server (package controllers), that give every namespace what
// workloads in it expect: the serviceaccount controller's `default`
// ServiceAccount, and the root-ca-cert-publisher's `kube-root-ca.crt`
// ConfigMap holding the CA that verifies the server. Each is recreated
// when deleted, and the ConfigMap is put back when changed, as upstream;
// nothing is written in a namespace being deleted.
//
// Both are driven by an informer on Namespaces and one on the object they
// keep, narrowed by a field selector to that one name in every namespace,
// so they hold no other ServiceAccount or ConfigMap in memory.
package serviceaccount

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/apiloom/apiloom/server/controllers"
)

// perNamespace is a loop keeping one named object in every namespace.
type perNamespace struct {
	name string
	// object is the name of the object kept in each namespace.
	object string
	// informer is the informer of the kept kind, from a factory narrowed
	// to object.
	informer func(informers.SharedInformerFactory) cache.SharedIndexInformer
	// sync makes the namespace's object right.
	sync func(ctx context.Context, client kubernetes.Interface, objects cache.Indexer, namespace string) error
	// workers is how many namespaces are synced at once.
	workers int
}

// run is controllers.Controller's Run for l.
func (l *perNamespace) run(ctx context.Context, env *controllers.Env) error {
	client, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		return fmt.Errorf("%s: %w", l.name, err)
	}
	nsFactory := informers.NewSharedInformerFactory(client, 0)
	objFactory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", l.object).String()
	}))
	namespaces := nsFactory.Core().V1().Namespaces()
	nsLister := namespaces.Lister()
	objects := l.informer(objFactory)
	// Retries back off as upstream's: client-go's default controller
	// rate limiter.
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: l.name})
	enqueueNamespace := func(obj any) {
		if ns, ok := obj.(*corev1.Namespace); ok {
			queue.Add(ns.Name)
		}
	}
	if _, err := namespaces.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueueNamespace,
		UpdateFunc: func(_, obj any) { enqueueNamespace(obj) },
	}); err != nil {
		return fmt.Errorf("%s: %w", l.name, err)
	}
	enqueueOwner := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if m, ok := obj.(metav1.Object); ok && m.GetName() == l.object {
			queue.Add(m.GetNamespace())
		}
	}
	if _, err := objects.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) { enqueueOwner(obj) },
		DeleteFunc: enqueueOwner,
	}); err != nil {
		return fmt.Errorf("%s: %w", l.name, err)
	}
	nsFactory.Start(ctx.Done())
	objFactory.Start(ctx.Done())
	defer nsFactory.Shutdown()
	defer objFactory.Shutdown()
	defer queue.ShutDown()
	if !cache.WaitForCacheSync(ctx.Done(), namespaces.Informer().HasSynced, objects.HasSynced) {
		return ctx.Err()
	}
	var wg sync.WaitGroup
	for range max(l.workers, 1) {
		wg.Go(func() {
			for l.next(ctx, queue, client, nsLister, objects.GetIndexer(), env) {
			}
		})
	}
	<-ctx.Done()
	queue.ShutDown()
	wg.Wait()
	return nil
}

// next syncs the next namespace of queue; false once it is shut down.
func (l *perNamespace) next(ctx context.Context, queue workqueue.TypedRateLimitingInterface[string], client kubernetes.Interface,
	nsLister corelisters.NamespaceLister, objects cache.Indexer, env *controllers.Env) bool {
	ns, quit := queue.Get()
	if quit {
		return false
	}
	defer queue.Done(ns)
	namespace, err := nsLister.Get(ns)
	if err != nil || namespace.Status.Phase == corev1.NamespaceTerminating || namespace.DeletionTimestamp != nil {
		queue.Forget(ns)
		return true // gone or going: nothing to keep there
	}
	switch err := l.sync(ctx, client, objects, ns); {
	case err == nil, apierrors.IsNotFound(err), apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		// Done, or the namespace went away meanwhile: not retried, as upstream.
		queue.Forget(ns)
	case ctx.Err() != nil:
	default:
		env.Log.Warn(l.name+" failed; retrying", "namespace", ns, "err", err)
		queue.AddRateLimited(ns)
	}
	return true
}

// cached is the object named name in namespace in objects, or nil.
func cached[T any](objects cache.Indexer, namespace, name string) *T {
	obj, ok, err := objects.GetByKey(namespace + "/" + name)
	if err != nil || !ok {
		return nil
	}
	t, _ := obj.(*T)
	return t
}
