package convert

import (
	"context"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/wire"
)

// Watch implements storage.Interface: the inner watch, each event
// converted. An event the inner storage encoded once for all its watchers
// (the watch cache's, Frame set) is converted and encoded once for all
// this version's watchers too (frameMemo); others are converted per
// watcher and encoded by the handler.
func (c *Storage[O, S]) Watch(ctx context.Context, opts storage.ListOptions) (storage.Watcher[O], error) {
	opts, err := c.storageOptions(opts)
	if err != nil {
		return nil, err
	}
	w, err := c.inner.Watch(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &watcher[O, S]{c: c, inner: w}, nil
}

// watcher is a converting storage.Watcher. Poll is called by one
// goroutine at a time (the Watcher contract); buf is that goroutine's.
type watcher[O, S resource.Object] struct {
	c     *Storage[O, S]
	inner storage.Watcher[S]
	buf   []storage.Event[S]
}

var _ storage.Watcher[resource.Object] = (*watcher[resource.Object, resource.Object])(nil)

// Poll implements storage.Watcher. An event that does not convert ends
// the watch with the error, after the events before it.
func (w *watcher[O, S]) Poll(ctx context.Context, out []storage.Event[O]) ([]storage.Event[O], error) {
	events, err := w.inner.Poll(ctx, w.buf[:0])
	for i := range events {
		ev, cerr := w.c.convertEvent(&events[i])
		if cerr != nil {
			clear(events)
			return out, cerr
		}
		out = append(out, ev)
	}
	clear(events) // let the stored objects go
	w.buf = events[:0]
	return out, err
}

// NotifyOnce implements storage.Watcher.
func (w *watcher[O, S]) NotifyOnce(wake func()) { w.inner.NotifyOnce(wake) }

// Stop implements storage.Watcher.
func (w *watcher[O, S]) Stop() { w.inner.Stop() }

// convertEvent is ev in version O. A BOOKMARK is converted but not kept:
// its object is empty, and two of one revision may differ (the one ending
// the initial events is annotated).
func (c *Storage[O, S]) convertEvent(ev *storage.Event[S]) (storage.Event[O], error) {
	shared := ev.Frame != nil && ev.Type != watch.Bookmark
	var k memoKey
	if shared {
		k = memoKey{typ: ev.Type, ns: ev.Object.GetNamespace(), name: ev.Object.GetName(), rv: ev.Object.GetResourceVersion()}
		if obj, frame, ok := c.frames.get(k); ok {
			return storage.Event[O]{Type: ev.Type, Object: obj.(O), Frame: frame, Corrupt: ev.Corrupt}, nil
		}
	}
	o, err := c.fromStorage(ev.Object)
	if err != nil {
		return storage.Event[O]{}, err
	}
	out := storage.Event[O]{Type: ev.Type, Object: o, Corrupt: ev.Corrupt}
	if shared {
		raw, err := wire.EncodeObject(o, c.gvk)
		if err != nil {
			return storage.Event[O]{}, err
		}
		t := string(ev.Type)
		out.Frame = wire.AppendWatchFrame(make([]byte, 0, wire.WatchFrameSize(t, raw)), t, raw)
		c.frames.put(k, o, out.Frame)
	}
	return out, nil
}
