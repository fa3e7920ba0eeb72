// Package namespace is kube-controller-manager's namespace controller,
// run inside the server (package controllers): for each namespace whose
// deletion was requested (Terminating), it deletes every namespaced object
// of every served resource in it, keeps the namespace's deletion
// conditions as upstream does, waits for objects held by finalizers, and
// then removes the "kubernetes" finalizer from spec.finalizers through
// namespaces/finalize, upon which the server removes the namespace.
//
// It is driven by an informer on namespaces (a watch served from the
// watch cache), never by polling; a namespace whose content is not gone
// yet is retried with backoff.
package namespace

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/apiloom/apiloom/server/controllers"
)

// Config configures the controller; DefaultConfig is
// kube-controller-manager's.
type Config struct {
	// Workers is how many namespaces are deleted at once
	// (--concurrent-namespace-syncs).
	Workers int
	// RetryBase and RetryMax bound the exponential backoff of a namespace
	// whose content is not gone yet or whose deletion failed.
	RetryBase, RetryMax time.Duration
}

// DefaultConfig is kube-controller-manager's: 10 workers; a namespace
// whose content waits on finalizers is retried within 8s (upstream's
// finalizer estimate of 15s, halved, plus one), sooner at first.
func DefaultConfig() Config {
	return Config{Workers: 10, RetryBase: 250 * time.Millisecond, RetryMax: 8 * time.Second}
}

// Controller is the namespace controller.
type Controller struct {
	cfg Config
}

var _ controllers.Controller = (*Controller)(nil)

// New returns the controller with cfg.
func New(cfg Config) *Controller { return &Controller{cfg: cfg} }

// Name implements controllers.Controller.
func (c *Controller) Name() string { return "namespace-controller" }

// Run implements controllers.Controller.
func (c *Controller) Run(ctx context.Context, env *controllers.Env) error {
	client, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		return fmt.Errorf("namespace controller: %w", err)
	}
	meta, err := metadata.NewForConfig(env.Config)
	if err != nil {
		return fmt.Errorf("namespace controller: %w", err)
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	nsInformer := factory.Core().V1().Namespaces()
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](c.cfg.RetryBase, c.cfg.RetryMax),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "namespace"})
	enqueue := func(obj any) {
		if ns, ok := obj.(*corev1.Namespace); ok && ns.DeletionTimestamp != nil {
			queue.Add(ns.Name)
		}
	}
	if _, err := nsInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	}); err != nil {
		return fmt.Errorf("namespace controller: %w", err)
	}
	d := &deleter{client: client, meta: meta, lister: nsInformer.Lister(), resources: namespacedResources(env.Resources), log: env.Log}

	factory.Start(ctx.Done())
	defer factory.Shutdown()
	defer queue.ShutDown()
	if !cache.WaitForCacheSync(ctx.Done(), nsInformer.Informer().HasSynced) {
		return ctx.Err()
	}
	var wg sync.WaitGroup
	for range c.cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for worker(ctx, queue, d) {
			}
		}()
	}
	<-ctx.Done()
	queue.ShutDown()
	wg.Wait()
	return nil
}

// worker deletes the content of the next namespace of queue; false once
// the queue is shut down.
func worker(ctx context.Context, queue workqueue.TypedRateLimitingInterface[string], d *deleter) bool {
	name, quit := queue.Get()
	if quit {
		return false
	}
	defer queue.Done(name)
	err := d.sync(ctx, name)
	switch {
	case err == nil:
		queue.Forget(name)
	case ctx.Err() != nil:
	default:
		if !errors.Is(err, errContentRemains) {
			d.log.Warn("namespace deletion failed; retrying", "namespace", name, "err", err)
		}
		queue.AddRateLimited(name)
	}
	return true
}
