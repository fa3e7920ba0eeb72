package registry

import (
	"context"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/server/hook"
	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
)

// Watcher implements hook.Watchers: the readers are also the kinds'
// watch sources, over the same storage (the watch cache when there is
// one).
func (r hookReaders) Watcher(t reflect.Type) any { return r[t] }

var _ hook.WatchSource[resource.Object] = (*storeReader[resource.Object])(nil)

// Watch implements hook.WatchSource as a client's watch is served: with
// SendInitialEvents a consistent watch-list (an ADDED per object, then
// InitialEventsEnd from the bookmark that ends them), else the changes
// after the current revision. It ends with ctx.
func (s *storeReader[O]) Watch(ctx context.Context, namespace string, opts hook.WatchOptions) (hook.Watcher[O], error) {
	initial := opts.SendInitialEvents
	lo := storage.ListOptions{
		Namespace:         namespace,
		Predicate:         storage.Predicate{Label: opts.Labels, Field: opts.Fields},
		SendInitialEvents: &initial,
		AllowBookmarks:    initial,
	}
	w, err := s.store.Watch(ctx, lo)
	if err != nil {
		return nil, err
	}
	return &storeWatcher[O]{b: storage.NewBlocking(w)}, nil
}

// storeWatcher is a hook.Watcher over a storage watch, driven from its
// caller's goroutine (storage.Blocking): it owns no goroutine, and Stop
// releases the storage watcher.
type storeWatcher[O resource.Object] struct {
	b *storage.Blocking[O]
	// pending are events read and not yet returned, in order.
	pending []storage.Event[O]
	buf     []storage.Event[O]
}

func (w *storeWatcher[O]) Next(ctx context.Context) (hook.WatchEvent[O], error) {
	for {
		for len(w.pending) > 0 {
			ev := w.pending[0]
			w.pending[0] = storage.Event[O]{}
			w.pending = w.pending[1:]
			switch ev.Type {
			case watch.Added, watch.Modified, watch.Deleted:
				return hook.WatchEvent[O]{Type: ev.Type, Object: ev.Object}, nil
			case watch.Bookmark:
				if ev.Object.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
					return hook.WatchEvent[O]{Type: hook.InitialEventsEnd}, nil
				}
			}
		}
		events, err := w.b.Next(ctx, w.buf[:0])
		w.buf = events[:0]
		w.pending = append(w.pending[:0], events...)
		if err != nil && len(w.pending) == 0 {
			return hook.WatchEvent[O]{}, err
		}
	}
}

func (w *storeWatcher[O]) Stop() { w.b.Stop() }
