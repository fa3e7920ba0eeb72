// Package resourcequota is kube-controller-manager's resourcequota
// controller, run inside the server (package controllers): it keeps each
// ResourceQuota's status current, status.hard a copy of spec.hard and
// status.used the objects the quota counts, recalculated when the quota
// is created or its spec changes, when an object of a counted resource
// is deleted in its namespace (so counts come back), and every sync
// period. The ResourceQuota admission plugin raises status.used as it
// admits creates; this controller is what lowers it again.
//
// Counts are read from metadata informers over the server's loopback
// (its watch caches), started for a resource the first time a quota
// names it, so a server without quotas watches nothing more.
package resourcequota

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	quotav1 "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/apiserver/pkg/quota/v1/generic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/apiloom/apiloom/server/admission/quota"
	"github.com/apiloom/apiloom/server/controllers"
)

// Config configures the controller; DefaultConfig is
// kube-controller-manager's.
type Config struct {
	// Workers is how many quotas are synced at once
	// (--concurrent-resource-quota-syncs).
	Workers int
	// SyncPeriod is how often every quota is recalculated
	// (--resource-quota-sync-period).
	SyncPeriod time.Duration
}

// DefaultConfig is kube-controller-manager's: 5 workers, every 5 minutes.
func DefaultConfig() Config { return Config{Workers: 5, SyncPeriod: 5 * time.Minute} }

// Controller is the resourcequota controller.
type Controller struct {
	cfg Config
}

var _ controllers.Controller = (*Controller)(nil)

// New returns the controller with cfg.
func New(cfg Config) *Controller {
	if cfg.Workers < 1 {
		cfg.Workers = 1
	}
	return &Controller{cfg: cfg}
}

// Name implements controllers.Controller.
func (c *Controller) Name() string { return "resourcequota-controller" }

// Run implements controllers.Controller.
func (c *Controller) Run(ctx context.Context, env *controllers.Env) error {
	client, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		return fmt.Errorf("resourcequota controller: %w", err)
	}
	meta, err := metadata.NewForConfig(env.Config)
	if err != nil {
		return fmt.Errorf("resourcequota controller: %w", err)
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	quotas := factory.Core().V1().ResourceQuotas()
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "resourcequota"})
	s := &syncer{client: client, lister: quotas.Lister(), queue: queue}
	s.monitors = newMonitors(ctx, meta, env.Resources, s.enqueueNamespace)
	s.registry = generic.NewRegistry(quota.Evaluators(s.monitors.counted(), s.monitors.lister))
	if _, err := quotas.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: s.enqueue,
		UpdateFunc: func(old, obj any) {
			// The admission plugin's writes of status.used change nothing
			// to recalculate; a change of the spec does.
			o, n := old.(*corev1.ResourceQuota), obj.(*corev1.ResourceQuota)
			if !apiequality.Semantic.DeepEqual(o.Spec, n.Spec) || !quotav1.Equals(n.Spec.Hard, n.Status.Hard) {
				s.enqueue(obj)
			}
		},
	}); err != nil {
		return fmt.Errorf("resourcequota controller: %w", err)
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	defer s.monitors.stop()
	defer queue.ShutDown()
	if !cache.WaitForCacheSync(ctx.Done(), quotas.Informer().HasSynced) {
		return ctx.Err()
	}
	var wg sync.WaitGroup
	for range c.cfg.Workers {
		wg.Go(func() {
			for s.work(ctx) {
			}
		})
	}
	if c.cfg.SyncPeriod > 0 {
		wg.Go(func() {
			t := time.NewTicker(c.cfg.SyncPeriod)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					s.enqueueAll()
				}
			}
		})
	}
	<-ctx.Done()
	queue.ShutDown()
	wg.Wait()
	return nil
}

// syncer recalculates quotas.
type syncer struct {
	client   kubernetes.Interface
	lister   corelisters.ResourceQuotaLister
	queue    workqueue.TypedRateLimitingInterface[string]
	monitors *monitors
	registry quotav1.Registry
}

func (s *syncer) enqueue(obj any) {
	if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
		s.queue.Add(key)
	}
}

// enqueueNamespace queues every quota of ns: an object there went away.
func (s *syncer) enqueueNamespace(ns string) {
	list, err := s.lister.ResourceQuotas(ns).List(labels.Everything())
	if err != nil {
		return
	}
	for _, q := range list {
		s.enqueue(q)
	}
}

func (s *syncer) enqueueAll() {
	list, err := s.lister.List(labels.Everything())
	if err != nil {
		return
	}
	for _, q := range list {
		s.enqueue(q)
	}
}

// work syncs the next quota of the queue; false once it is shut down.
func (s *syncer) work(ctx context.Context) bool {
	key, quit := s.queue.Get()
	if quit {
		return false
	}
	defer s.queue.Done(key)
	switch err := s.sync(ctx, key); {
	case err == nil:
		s.queue.Forget(key)
	case ctx.Err() != nil:
	default:
		s.queue.AddRateLimited(key)
	}
	return true
}

// sync is upstream's syncResourceQuota: status.hard becomes spec.hard,
// status.used the usage calculated for each hard resource (kept as it
// was for those no evaluator counts), written when either changed. A
// conflict (the admission plugin charged meanwhile) is retried.
func (s *syncer) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	q, err := s.lister.ResourceQuotas(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	status, err := s.status(ctx, q)
	if err != nil {
		return err
	}
	if apiequality.Semantic.DeepEqual(status, q.Status) && q.Status.Hard != nil && q.Status.Used != nil {
		return nil
	}
	updated := q.DeepCopy()
	updated.Status = status
	_, err = s.client.CoreV1().ResourceQuotas(ns).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err == nil && released(q.Status.Used, status.Used) {
		// The counts come from informers, which may not yet hold an
		// object the admission plugin charged just before this
		// recalculation read the quota: a count lowered now is checked
		// again shortly, so such a charge is not lost until the next
		// sync period (upstream's controller waits for that period).
		s.queue.AddAfter(key, recheckAfterRelease)
	}
	return err
}

// recheckAfterRelease is how soon a quota whose usage a recalculation
// lowered is recalculated again: well past an informer's usual lag.
const recheckAfterRelease = time.Second

// released reports whether any count of before is higher in after.
func released(before, after corev1.ResourceList) bool {
	for name, b := range before {
		if a, ok := after[name]; ok && a.Cmp(b) < 0 {
			return true
		}
	}
	return false
}

// status is q's status as it should be.
func (s *syncer) status(ctx context.Context, q *corev1.ResourceQuota) (corev1.ResourceQuotaStatus, error) {
	hard := quotav1.Add(corev1.ResourceList{}, q.Spec.Hard)
	if err := s.monitors.ensure(ctx, s.registry, quotav1.ResourceNames(hard)); err != nil {
		return corev1.ResourceQuotaStatus{}, err
	}
	used := quotav1.Add(corev1.ResourceList{}, q.Status.Used)
	usage, err := quotav1.CalculateUsage(q.Namespace, q.Spec.Scopes, hard, s.registry, q.Spec.ScopeSelector)
	for name, v := range usage {
		used[name] = v
	}
	if err != nil {
		return corev1.ResourceQuotaStatus{}, errors.Join(errors.New("calculating usage"), err)
	}
	return corev1.ResourceQuotaStatus{Hard: hard, Used: quotav1.Mask(used, quotav1.ResourceNames(hard))}, nil
}
