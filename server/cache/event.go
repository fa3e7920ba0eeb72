package cache

import (
	"sync"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
)

// event is one change in the history, encoded once and shared by every
// watcher that receives it.
type event[O resource.Object] struct {
	typ watch.EventType // ADDED, MODIFIED or DELETED
	rev int64           // the etcd revision of the change
	key string
	ns  string
	// cur is the state after the change (nil for DELETED), prev the state
	// before it (nil for ADDED). Selectors are matched against both, and
	// lists at older revisions undo the change by restoring prev.
	cur, prev *item[O]
	// src is the version a watcher that sees the event as typ gets, whose
	// frame is of type typ: cur for ADDED and MODIFIED; for DELETED the
	// last state carrying the deletion revision.
	src *item[O]
	// corrupt is set on a DELETED that was a PUT of a value that does not
	// decode (storage.Event.Corrupt).
	corrupt *storage.Error

	leaveOnce sync.Once
	leave     storage.Event[O] // see leaving
}

// leftWindow is called when the history drops the event: its item no
// longer needs to keep its encodings besides JSON (altEncodings). The item
// an event carries (src; cur is the same one or nil) is made for it, so no
// other event still in the window carries it.
func (e *event[O]) leftWindow() { e.src.unpin() }

// primary is the event as it happened, without the decoded object unless
// withObject (storage.ListOptions.Encoded).
func (e *event[O]) primary(withObject bool) storage.Event[O] {
	ev := storage.Event[O]{Type: e.typ, Frame: e.src.frame, Encodings: e.src.encodings(), Corrupt: e.corrupt}
	if withObject {
		ev.Object = e.src.object()
	}
	return ev
}

// entering is a MODIFIED event as seen by a watcher whose selector the
// object has just entered: an ADDED of the new state.
func (e *event[O]) entering(withObject bool) storage.Event[O] {
	return e.cur.addedEvent(withObject)
}

// leaving is a MODIFIED event as seen by a watcher whose selector the
// object has just left: a DELETED of the previous state, carrying the
// event's revision (as the store sends it). It is built once, on first use.
func (e *event[O]) leaving() storage.Event[O] {
	e.leaveOnce.Do(func() {
		obj := e.prev.object().DeepCopyObject().(O)
		obj.SetResourceVersion(storage.FormatResourceVersion(e.rev))
		e.leave = storage.Event[O]{Type: watch.Deleted, Object: obj}
		if raw, err := encodeObject(obj); err == nil {
			// On the impossible failure (prev encoded fine once) the
			// handler encodes Object itself.
			e.leave.Frame, _ = newFrame(watch.Deleted, raw)
		}
	})
	return e.leave
}
