package resourcequota

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	quotav1 "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/apiserver/pkg/quota/v1/generic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"

	"github.com/apiloom/apiloom/server/admission/quota"
	"github.com/apiloom/apiloom/server/resource"
)

// monitors are the metadata informers the counts are read from, one per
// counted resource a quota has named, started on first need and kept
// until the controller stops. A deletion they see queues the quotas of
// its namespace (upstream's replenishment).
type monitors struct {
	ctx      context.Context
	factory  metadatainformer.SharedInformerFactory
	gvrs     map[schema.GroupResource]schema.GroupVersionResource
	order    []schema.GroupResource
	deleted  func(namespace string)
	mu       sync.Mutex
	informer map[schema.GroupResource]cache.SharedIndexInformer
}

func newMonitors(ctx context.Context, client metadata.Interface, infos []*resource.Info, deleted func(string)) *monitors {
	m := &monitors{ctx: ctx, factory: metadatainformer.NewSharedInformerFactory(client, 0),
		gvrs: map[schema.GroupResource]schema.GroupVersionResource{}, deleted: deleted,
		informer: map[schema.GroupResource]cache.SharedIndexInformer{}}
	m.order = quota.Counted(infos)
	for _, i := range infos {
		if _, ok := m.gvrs[i.GroupResource()]; !ok {
			m.gvrs[i.GroupResource()] = i.GroupVersionResource()
		}
	}
	return m
}

// counted are the resources the controller can count.
func (m *monitors) counted() []schema.GroupResource { return m.order }

// lister lists gr's objects in a namespace from its informer, which
// ensure has started.
func (m *monitors) lister(gr schema.GroupResource) generic.ListFuncByNamespace {
	return func(namespace string) ([]runtime.Object, error) {
		m.mu.Lock()
		inf := m.informer[gr]
		m.mu.Unlock()
		if inf == nil {
			return nil, fmt.Errorf("%s: not watched", gr)
		}
		items, err := inf.GetIndexer().ByIndex(cache.NamespaceIndex, namespace)
		if err != nil {
			return nil, err
		}
		out := make([]runtime.Object, 0, len(items))
		for _, item := range items {
			if obj, ok := item.(runtime.Object); ok {
				out = append(out, obj)
			}
		}
		return out, nil
	}
}

// ensure starts the informer of each resource whose count is among
// names and waits until each has synced.
func (m *monitors) ensure(ctx context.Context, registry quotav1.Registry, names []corev1.ResourceName) error {
	var wait []cache.InformerSynced
	for _, e := range registry.List() {
		if len(e.MatchingResources(names)) == 0 {
			continue
		}
		inf, err := m.start(e.GroupResource())
		if err != nil {
			return err
		}
		wait = append(wait, inf.HasSynced)
	}
	if len(wait) > 0 && !cache.WaitForCacheSync(ctx.Done(), wait...) {
		return ctx.Err()
	}
	return nil
}

// start returns gr's informer, started.
func (m *monitors) start(gr schema.GroupResource) (cache.SharedIndexInformer, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if inf := m.informer[gr]; inf != nil {
		return inf, nil
	}
	gvr, ok := m.gvrs[gr]
	if !ok {
		return nil, fmt.Errorf("%s: not served", gr)
	}
	inf := m.factory.ForResource(gvr).Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: m.onDelete}); err != nil {
		return nil, err
	}
	m.informer[gr] = inf
	m.factory.Start(m.ctx.Done())
	return inf, nil
}

func (m *monitors) onDelete(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if o, err := meta.Accessor(obj); err == nil && o.GetNamespace() != "" {
		m.deleted(o.GetNamespace())
	}
}

// stop stops the informers and waits for them.
func (m *monitors) stop() { m.factory.Shutdown() }
