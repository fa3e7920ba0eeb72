package cache

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
)

// tickBookmarks is the goroutine that starts a bookmark period every
// bookmarkInterval.
func (c *Cache[O]) tickBookmarks(ctx context.Context) {
	ticks, stop := c.cfg.newTicker(c.cfg.bookmarkInterval)
	defer stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticks:
			c.tick()
		}
	}
}

// bookmarkEvent is a BOOKMARK at one revision, encoded once and shared by
// every watcher that gets it.
type bookmarkEvent[O resource.Object] struct {
	rev int64
	ev  storage.Event[O]
}

// bookmarkAt returns the BOOKMARK event at rev; with initialEnd, the one
// annotated k8s.io/initial-events-end that closes a watch-list's initial
// events. The last one of each kind is kept, since watchers that catch up
// together ask for the same revision.
func (c *Cache[O]) bookmarkAt(rev int64, initialEnd bool) storage.Event[O] {
	slot := &c.bookmark
	if initialEnd {
		slot = &c.endBookmark
	}
	if b := slot.Load(); b != nil && b.rev == rev {
		return b.ev
	}
	obj := c.def.New()
	obj.GetObjectKind().SetGroupVersionKind(c.gvk)
	obj.SetResourceVersion(storage.FormatResourceVersion(rev))
	if initialEnd {
		obj.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	}
	ev := storage.Event[O]{Type: watch.Bookmark, Object: obj}
	if raw, err := encodeObject(obj); err == nil {
		ev.Frame, _ = newFrame(watch.Bookmark, raw)
	}
	slot.Store(&bookmarkEvent[O]{rev: rev, ev: ev})
	return ev
}
