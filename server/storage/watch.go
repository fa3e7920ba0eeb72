package storage

import (
	"context"
	"io"
	"sync/atomic"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/server/resource"
)

// Watch implements Interface with one etcd watch per call, owned by one
// goroutine that decodes and filters events into the watcher's queue.
//
// Where the stream starts:
//   - SendInitialEvents unset and RV "" or "0", or SendInitialEvents=true:
//     a synthetic ADDED per matching object at the current revision S
//     (ErrTooLargeResourceVersion if RV is above S), then, for watch-list
//     with AllowBookmarks, a BOOKMARK at S annotated
//     k8s.io/initial-events-end, then every change after S.
//   - SendInitialEvents=false and RV "" or "0": every change after the
//     current revision.
//   - RV N otherwise: every change after N; if N has been compacted, Poll
//     returns an *Error wrapping ErrExpired.
//
// Values that do not decode never end the watch: the initial events skip
// them and a change to or from one becomes the event Interface documents
// (Corrupt values). The watcher remembers the keys it has seen unreadable,
// so that a readable value written over one is an ADDED even without a
// selector, which would otherwise not make it decode the previous value.
//
// With AllowBookmarks, etcd's progress notifications (periodic, or asked
// for with RequestProgress) become BOOKMARK events. A consumer that leaves
// more than the queue limit of events unread ends the watch with
// ErrExpired; no event is ever dropped.
//
// The watch lives until Stop is called or ctx ends.
func (s *Store[O]) Watch(ctx context.Context, opts ListOptions) (Watcher[O], error) {
	rangePrefix := s.prefix
	if s.namespaced && opts.Namespace != "" {
		if !validSegment(opts.Namespace) {
			return nil, &Error{Err: ErrInvalidKey, Key: opts.Namespace, Detail: "invalid namespace"}
		}
		rangePrefix += opts.Namespace + "/"
	}
	rv, err := ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return nil, err
	}
	sendInitial := rv == 0
	if opts.SendInitialEvents != nil {
		sendInitial = *opts.SendInitialEvents
	}

	// startRev is the revision the stream is consistent with before the
	// first live event: the snapshot of the initial events, or RV.
	startRev := rv
	if sendInitial || rv == 0 {
		cur, err := s.CurrentRevision(ctx)
		if err != nil {
			return nil, err
		}
		if rv > cur {
			return nil, &Error{Err: ErrTooLargeResourceVersion, ResourceVersion: rv, CurrentRevision: cur}
		}
		startRev = cur
	}

	wctx, cancel := context.WithCancel(watchContext(ctx))
	w := &watcher[O]{
		s:           s,
		pred:        opts.Predicate,
		bookmarks:   opts.AllowBookmarks,
		sendInitial: sendInitial,
		endBookmark: sendInitial && opts.SendInitialEvents != nil && opts.AllowBookmarks,
		start:       rangePrefix,
		end:         clientv3.GetPrefixRangeEnd(rangePrefix),
		startRev:    startRev,
		queue:       newEventQueue[O](s.cfg.watchQueueLimit),
		cancel:      cancel,
		done:        make(chan struct{}),
		unreadable:  make(map[string]struct{}),
	}
	go w.run(wctx)
	return w, nil
}

// watchContext marks ctx so that etcd ends watches on a member that lost
// its leader instead of leaving them silently stale. Watch and
// RequestProgress must use the same marking: the client groups watches
// into gRPC streams by it, and a progress request reaches only its stream.
func watchContext(ctx context.Context) context.Context {
	return clientv3.WithRequireLeader(ctx)
}

// watcher is one Watch: a producer goroutine (run) and the consumer's
// Poll/NotifyOnce/Stop, joined by queue.
type watcher[O resource.Object] struct {
	// Immutable after Watch.
	s           *Store[O]
	pred        Predicate
	bookmarks   bool   // turn progress notifications into BOOKMARKs
	sendInitial bool   // ADDED for the state at startRev first
	endBookmark bool   // then the initial-events-end BOOKMARK
	start, end  string // the watched key range
	startRev    int64
	queue       *eventQueue[O]
	cancel      context.CancelFunc // ends run and the etcd watch
	done        chan struct{}      // closed when run has returned

	stopped atomic.Bool // Stop was called: the stream ends with io.EOF

	// unreadable holds the relative keys whose last value the watch read
	// did not decode. Owned by run's goroutine.
	unreadable map[string]struct{}
}

// Poll implements Watcher.
func (w *watcher[O]) Poll(ctx context.Context, buf []Event[O]) ([]Event[O], error) {
	return w.queue.poll(ctx, buf)
}

// NotifyOnce implements Watcher.
func (w *watcher[O]) NotifyOnce(wake func()) { w.queue.notifyOnce(wake) }

// Stop implements Watcher: it ends the etcd watch and waits for the
// producer goroutine to exit.
func (w *watcher[O]) Stop() {
	w.stopped.Store(true)
	w.cancel()
	<-w.done
}

// run is the watch's goroutine. It owns the etcd watch and is the only
// writer of the queue.
func (w *watcher[O]) run(ctx context.Context) {
	defer close(w.done)
	defer w.cancel()
	err := w.produce(ctx)
	if ctx.Err() != nil {
		err = ctx.Err()
		if w.stopped.Load() {
			err = io.EOF
		}
	}
	w.queue.close(err)
}

// produce sends the initial events if asked, then streams etcd's events
// until the watch ends, returning why it ended.
func (w *watcher[O]) produce(ctx context.Context) error {
	if w.sendInitial {
		if err := w.sync(ctx); err != nil {
			return err
		}
	}
	if w.endBookmark {
		obj := w.s.codec.empty(w.startRev)
		obj.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
		if err := w.queue.push(ctx, Event[O]{Type: watch.Bookmark, Object: obj}); err != nil {
			return err
		}
	}

	wch := w.s.watcher.Watch(ctx, w.start,
		clientv3.WithRange(w.end),
		clientv3.WithRev(w.startRev+1),
		clientv3.WithPrevKV(),
		clientv3.WithProgressNotify())
	lastRev := w.startRev
	for resp := range wch {
		if err := resp.Err(); err != nil {
			if isCompacted(err) {
				return &Error{Err: ErrExpired, ResourceVersion: lastRev, CurrentRevision: resp.CompactRevision}
			}
			return etcdError("watch", w.start, err)
		}
		if resp.IsProgressNotify() {
			// A progress notification promises that every event up to its
			// revision has been delivered; it never goes backwards, but
			// check rather than send a bookmark that would.
			if rev := resp.Header.Revision; w.bookmarks && rev >= lastRev {
				lastRev = rev
				if !w.queue.tryPush(Event[O]{Type: watch.Bookmark, Object: w.s.codec.empty(rev)}) {
					return w.fellBehind(rev)
				}
			}
			continue
		}
		for _, ev := range resp.Events {
			e, ok := w.convert(ctx, ev)
			lastRev = ev.Kv.ModRevision
			if ok && !w.queue.tryPush(e) {
				return w.fellBehind(lastRev)
			}
		}
	}
	return io.EOF // the client closed
}

func (w *watcher[O]) fellBehind(rev int64) error {
	return &Error{Err: ErrExpired, ResourceVersion: rev, Detail: "the watcher fell too far behind"}
}

// sync queues an ADDED event for every matching object at startRev,
// reading etcd in pages and waiting for the consumer when the queue is full.
func (w *watcher[O]) sync(ctx context.Context) error {
	start := w.start
	for {
		resp, err := w.s.kv.Get(ctx, start,
			clientv3.WithRange(w.end),
			clientv3.WithRev(w.startRev),
			clientv3.WithLimit(w.s.cfg.syncPageSize))
		if err != nil {
			if isCompacted(err) {
				return &Error{Err: ErrExpired, ResourceVersion: w.startRev}
			}
			return etcdError("list", w.start, err)
		}
		for _, kv := range resp.Kvs {
			key := w.s.relKey(kv.Key)
			obj, err := w.s.decode(ctx, kv.Value, kv.ModRevision, key)
			if err != nil {
				w.unreadable[key] = struct{}{} // skipped, as GetList skips it
				continue
			}
			if !w.s.matches(w.pred, obj) {
				continue
			}
			if err := w.queue.push(ctx, Event[O]{Type: watch.Added, Object: obj}); err != nil {
				return err
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return nil
		}
		start = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// convert turns one etcd event into the watch event the predicate calls
// for, if any. Objects carry the event's revision: for DELETED, the state
// before the change with the deletion (or modification) revision. Values
// that do not decode are handled as Interface documents (Corrupt values).
func (w *watcher[O]) convert(ctx context.Context, ev *clientv3.Event) (Event[O], bool) {
	key := w.s.relKey(ev.Kv.Key)
	rev := ev.Kv.ModRevision
	none := Event[O]{}

	if ev.Type == clientv3.EventTypeDelete {
		delete(w.unreadable, key)
		prev, ok := w.previous(ctx, ev, key, rev)
		if !ok {
			return w.deletedKey(key, rev, nil)
		}
		if !w.s.matches(w.pred, prev) {
			return none, false
		}
		return Event[O]{Type: watch.Deleted, Object: prev}, true
	}

	cur, err := w.s.decode(ctx, ev.Kv.Value, rev, key)
	if err != nil {
		return w.becameUnreadable(ctx, ev, key, rev, err)
	}
	curOK := w.s.matches(w.pred, cur)
	_, wasUnreadable := w.unreadable[key]
	delete(w.unreadable, key)
	if ev.IsCreate() || wasUnreadable {
		if !curOK {
			return none, false
		}
		return Event[O]{Type: watch.Added, Object: cur}, true
	}
	if w.pred.Empty() {
		return Event[O]{Type: watch.Modified, Object: cur}, true
	}
	if ev.PrevKv == nil {
		// The previous state is unknown; a DELETED for an object the
		// client never had is harmless, a stale object left behind is not.
		if curOK {
			return Event[O]{Type: watch.Modified, Object: cur}, true
		}
		return Event[O]{Type: watch.Deleted, Object: cur}, true
	}
	// An unreadable previous value is a state the client does not hold.
	prev, prevRead := w.previous(ctx, ev, key, rev)
	switch prevOK := prevRead && w.s.matches(w.pred, prev); {
	case curOK && prevOK:
		return Event[O]{Type: watch.Modified, Object: cur}, true
	case curOK:
		return Event[O]{Type: watch.Added, Object: cur}, true
	case prevOK:
		return Event[O]{Type: watch.Deleted, Object: prev}, true
	default:
		return none, false
	}
}

// becameUnreadable is the event for a PUT of a value that does not decode
// (decodeErr): the object's last readable state leaves the watch, as a
// DELETED of that state if it decodes and matched, or built from the key
// if the previous value is unreadable, unknown or absent.
func (w *watcher[O]) becameUnreadable(ctx context.Context, ev *clientv3.Event, key string, rev int64, decodeErr error) (Event[O], bool) {
	w.unreadable[key] = struct{}{}
	corrupt, _ := corruptError(decodeErr)
	prev, ok := w.previous(ctx, ev, key, rev)
	if !ok {
		return w.deletedKey(key, rev, corrupt)
	}
	if !w.s.matches(w.pred, prev) {
		return Event[O]{}, false // the client does not hold it
	}
	return Event[O]{Type: watch.Deleted, Object: prev, Corrupt: corrupt}, true
}

// deletedKey is a DELETED built from the key at rev, for a change whose
// previous state cannot be read: delivered if the object may match.
func (w *watcher[O]) deletedKey(key string, rev int64, corrupt *Error) (Event[O], bool) {
	obj := w.s.codec.keyObject(key, rev)
	if !w.pred.MayMatchKey(obj.GetNamespace(), obj.GetName()) {
		return Event[O]{}, false
	}
	return Event[O]{Type: watch.Deleted, Object: obj, Corrupt: corrupt}, true
}

// previous decodes the state before ev, stamped with ev's revision. It
// reports false when there is none to read: etcd sent no previous value
// (a create, or compacted history) or the value does not decode.
func (w *watcher[O]) previous(ctx context.Context, ev *clientv3.Event, key string, rev int64) (O, bool) {
	var zero O
	if ev.PrevKv == nil {
		return zero, false
	}
	// Decoded at its own revision, which a decode error names.
	obj, err := w.s.decode(ctx, ev.PrevKv.Value, ev.PrevKv.ModRevision, key)
	if err != nil {
		return zero, false
	}
	w.s.codec.stamp(obj, rev)
	return obj, true
}
