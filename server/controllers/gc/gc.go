package gc

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/lru"

	"github.com/apiloom/apiloom/server/controllers"
	"github.com/apiloom/apiloom/server/resource"
)

// DefaultWorkers is how many objects the collector works on at once,
// kube-controller-manager's --concurrent-gc-syncs default.
const DefaultWorkers = 20

// absentCacheSize is how many owners known to be absent are remembered,
// sparing a live read per dependent of a deleted owner (upstream's size).
const absentCacheSize = 500

// Collector is the garbage collector, a controllers.Controller.
type Collector struct {
	workers int
}

var _ controllers.Controller = (*Collector)(nil)

// New returns a collector running workers workers per queue (at least one).
func New(workers int) *Collector { return &Collector{workers: max(workers, 1)} }

// Name implements controllers.Controller.
func (*Collector) Name() string { return "garbage-collector" }

// Run builds the graph from env's resources and collects until ctx ends.
func (c *Collector) Run(ctx context.Context, env *controllers.Env) error {
	client, err := metadata.NewForConfig(env.Config)
	if err != nil {
		return fmt.Errorf("gc: %w", err)
	}
	events, stopEvents, err := newEventSink(env)
	if err != nil {
		return err
	}
	defer stopEvents()
	col := newCollector(client, newKinds(env.Resources), events, env.Log.With("controller", c.Name()))
	col.run(ctx, monitored(env.Resources), c.workers)
	return nil
}

// collector is one run of the garbage collector.
type collector struct {
	// Immutable:
	client metadata.Interface
	kinds  kinds
	events eventSink
	log    *slog.Logger

	// graph is changed by the goroutine serving changes only.
	graph *graph
	// changes are the informers' events and the virtual deletes, applied
	// in order by one goroutine.
	changes *workqueue.Typed[*change]
	// attemptToDelete are nodes that may be garbage, or owners waiting for
	// their dependents; attemptToOrphan owners to orphan the dependents of.
	attemptToDelete, attemptToOrphan workqueue.TypedRateLimitingInterface[*node]
	// absent remembers refs verified absent (it has its own lock).
	absent *lru.Cache
}

func newCollector(client metadata.Interface, k kinds, events eventSink, log *slog.Logger) *collector {
	queue := func(name string) workqueue.TypedRateLimitingInterface[*node] {
		return workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[*node](),
			workqueue.TypedRateLimitingQueueConfig[*node]{Name: name})
	}
	return &collector{
		client: client, kinds: k, events: events, log: log,
		graph:           newGraph(),
		changes:         workqueue.NewTyped[*change](),
		attemptToDelete: queue("garbage_collector_attempt_to_delete"),
		attemptToOrphan: queue("garbage_collector_attempt_to_orphan"),
		absent:          lru.New(absentCacheSize),
	}
}

// run watches resources, and once every informer has listed, starts the
// workers; it returns when ctx ends and every goroutine it started has
// stopped.
func (c *collector) run(ctx context.Context, resources []*resource.Info, workers int) {
	var wg sync.WaitGroup
	defer func() {
		c.changes.ShutDown()
		c.attemptToDelete.ShutDown()
		c.attemptToOrphan.ShutDown()
		wg.Wait()
	}()
	synced := make([]cache.InformerSynced, 0, len(resources))
	for _, r := range resources {
		inf := metadatainformer.NewFilteredMetadataInformer(c.client, r.GroupVersionResource(), "", 0, cache.Indexers{}, nil).Informer()
		if err := inf.SetTransform(graphFieldsOnly); err != nil {
			c.log.Error("gc: watching", "resource", r.GroupResource(), "err", err)
			continue
		}
		if _, err := inf.AddEventHandler(c.handlers(r.GroupVersionKind())); err != nil {
			c.log.Error("gc: watching", "resource", r.GroupResource(), "err", err)
			continue
		}
		synced = append(synced, inf.HasSynced)
		wg.Go(func() { inf.RunWithContext(ctx) })
	}
	wg.Go(func() {
		for c.processNextChange() {
		}
	})
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return
	}
	c.log.Info("gc: graph built; collecting", "resources", len(resources))
	for range workers {
		wg.Go(func() {
			for c.processNextDelete(ctx) {
			}
		})
		wg.Go(func() {
			for c.processNextOrphan(ctx) {
			}
		})
	}
	<-ctx.Done()
}

// graphFieldsOnly keeps of an object's metadata what the graph reads:
// identity, owners, finalizers and deletion. The informers hold every
// object of every resource for the server's life, in the server's own
// process (kube-controller-manager's are in another), and managedFields,
// labels and annotations were most of that.
func graphFieldsOnly(obj any) (any, error) {
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil // a tombstone: its object was kept trimmed
	}
	return &metav1.PartialObjectMetadata{TypeMeta: m.TypeMeta, ObjectMeta: metav1.ObjectMeta{
		Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
		OwnerReferences: m.OwnerReferences, Finalizers: m.Finalizers,
		DeletionTimestamp: m.DeletionTimestamp, DeletionGracePeriodSeconds: m.DeletionGracePeriodSeconds,
	}}, nil
}
