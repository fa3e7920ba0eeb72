package registry

import (
	"context"
	"errors"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/apiloom/apiloom/server/hook"
	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
)

// hookReaders are the readers hooks reach every served kind through
// (hook.Get, hook.List), by Go type. Build fills it while it builds the
// resources and only reads it once requests come, so it needs no lock.
type hookReaders map[reflect.Type]any

// Reader implements hook.Readers.
func (r hookReaders) Reader(t reflect.Type) any { return r[t] }

// addHookReader makes the objects of def, served over iface, readable by
// hooks.
func addHookReader[O resource.Object](r hookReaders, def *resource.Definition[O], iface storage.Interface[O]) {
	r[reflect.TypeFor[O]()] = &storeReader[O]{def: def, store: iface}
}

// storeReader is a hook.Reader over a resource's storage, read as a
// client's request would be: a cached read at resourceVersion "0" (what
// the watch cache holds, no etcd round trip), a consistent one without a
// resourceVersion. The watch cache answers the latter as it answers a
// client: a Get by a quorum read of etcd, a List once the cache has seen
// etcd's current revision (or by etcd if it does not in time). Over the
// etcd store alone, both are quorum reads.
type storeReader[O resource.Object] struct {
	def   *resource.Definition[O]
	store storage.Interface[O]
}

var _ hook.Reader[resource.Object] = (*storeReader[resource.Object])(nil)

// resourceVersion is the resourceVersion of a read with opts.
func resourceVersion(opts hook.ReadOptions) string {
	if opts.Consistent {
		return ""
	}
	return "0"
}

func (s *storeReader[O]) Get(ctx context.Context, namespace, name string, opts hook.ReadOptions) (O, error) {
	obj, err := s.store.Get(ctx, storage.Key(namespace, name), storage.GetOptions{ResourceVersion: resourceVersion(opts)})
	if errors.Is(err, storage.ErrNotFound) {
		var zero O
		return zero, apierrors.NewNotFound(s.def.GroupResource(), name)
	}
	return obj, err
}

func (s *storeReader[O]) List(ctx context.Context, namespace string, sel labels.Selector, opts hook.ReadOptions) ([]O, error) {
	list, err := s.store.GetList(ctx, storage.ListOptions{Namespace: namespace, ResourceVersion: resourceVersion(opts), Predicate: storage.Predicate{Label: sel}})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}
