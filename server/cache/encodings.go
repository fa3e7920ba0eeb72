package cache

import (
	"errors"
	"sync"
	"sync/atomic"
	"weak"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/wire"
)

// errUnknownFormat is asked for a format the cache does not encode.
var errUnknownFormat = errors.New("cache: unknown encoding format")

// formats are the formats besides JSON the cache keeps encodings in, and
// whether it keeps them for the item's life or only while the item is in
// the window (altEncodings). Measured at 100,000 objects against the
// previous commit, which kept both for life, in the same runs
// (2026-11-28, SCENARIOS=informer make load):
//   - CBOR, kept for life: apimachinery's CBOR encoder costs about 20 µs
//     of CPU an object. Made per sync, a CBOR informer's sync took 2.7×
//     the server CPU and up to 1.6× the time.
//   - Protobuf, kept in the window: the generated Marshal is cheap. Made
//     per sync (four runs), watch-list syncs took 0.96–1.04× the time;
//     list+watch syncs 1.00–1.35× the time and 1.01–1.19× the server CPU,
//     for a list takes each item's Size before its Marshal. Kept for life,
//     they were 138 MiB of live heap once a protobuf client had synced
//     (571 against 433 MiB at the next collection).
var formats = [...]struct {
	f       wire.Format
	forLife bool
}{{wire.CBOR, true}, {wire.Protobuf, false}}

// slot is f's index in an item's alternative encodings.
func slot(f wire.Format) (int, bool) {
	for i, g := range formats {
		if g.f == f {
			return i, true
		}
	}
	return 0, false
}

// altEncodings are an item's encodings in the formats besides JSON, each
// made on the first request for it. The item allocates them on the first
// request for any, so that a cache whose clients all speak JSON pays a
// pointer per item for them.
//
// An encoding is held for the item's life if its format says so, and
// otherwise while the item is what an event in the history window carries
// (item.pinned): every watcher of the event gets the same bytes, made
// once. Outside the window (a listed item, or one whose event has left the
// window) it is held weakly, as sharedFrame holds a frame: shared while
// someone uses it, then left to the garbage collector: a list or a
// watch-list sync in that format encodes the items it sends, as
// kube-apiserver does for every list, and the cache does not keep a copy
// of every object in it once one client has asked for the format.
//
// A held encoding is read without the lock: a fan-out asks for it once per
// watcher, all at once.
type altEncodings struct {
	mu    sync.Mutex // guards writes to slots and weak reads, and serializes encoding
	slots [len(formats)]struct {
		held atomic.Pointer[encoding]
		weak weak.Pointer[encoding]
	}
}

// encoding is one item's encoding in one format: the object, the frame of
// the event that made the version, and its ADDED frame when that event
// was another.
type encoding struct {
	obj, frame []byte // obj is the end of frame
	err        error

	added sharedFrame
}

// encodingIn returns the item's encoding in f, made unless someone holds
// it.
func (it *item[O]) encodingIn(f wire.Format) (*encoding, error) {
	i, ok := slot(f)
	if !ok {
		return nil, errUnknownFormat
	}
	a := it.alt.Load()
	if a == nil {
		it.alt.CompareAndSwap(nil, new(altEncodings))
		a = it.alt.Load()
	}
	s := &a.slots[i]
	if e := s.held.Load(); e != nil {
		return e, e.err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if e := s.held.Load(); e != nil {
		return e, e.err
	}
	if e := s.weak.Value(); e != nil {
		return e, e.err
	}
	e := &encoding{}
	o := it.object()
	obj, err := wire.EncodeObjectAs(f, o, o.GetObjectKind().GroupVersionKind())
	if err != nil {
		e.err = err
	} else {
		e.frame, e.obj = frameWith(f, it.frameType, obj)
	}
	// pinned is read under mu, which unpin takes after clearing it: an
	// encoding made after the item left the window is never held.
	if formats[i].forLife || it.pinned.Load() {
		s.held.Store(e)
	} else {
		s.weak = weak.Make(e)
	}
	return e, e.err
}

// unpin lets the item's decoded object and its encodings of the formats
// not kept for life go once nobody uses them: the event that carries the
// item has left the history window.
func (it *item[O]) unpin() {
	it.pinned.Store(false)
	it.unpinObject()
	a := it.alt.Load()
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := range a.slots {
		if s := &a.slots[i]; !formats[i].forLife {
			if e := s.held.Swap(nil); e != nil {
				s.weak = weak.Make(e)
			}
		}
	}
}

// frameWith is newFrame for format f: the frame, and obj as its end.
func frameWith(f wire.Format, typ watch.EventType, obj []byte) (frame, objInFrame []byte) {
	frame = wire.NewWatchFrameAs(f, string(typ), obj)
	return frame, frame[len(frame)-len(obj):]
}

// encodings are the item's encodings with the frame of the event that
// made the version.
func (it *item[O]) encodings() storage.Encodings { return (*itemEncodings[O])(it) }

// addedEncodings are the item's encodings with its ADDED frame.
func (it *item[O]) addedEncodings() storage.Encodings { return (*addedEncodings[O])(it) }

// itemEncodings and addedEncodings are an item seen as storage.Encodings
// with one frame or the other; the conversion from *item costs nothing.
type (
	itemEncodings[O resource.Object]  item[O]
	addedEncodings[O resource.Object] item[O]
)

func (e *itemEncodings[O]) Object(f wire.Format) ([]byte, error) {
	return (*item[O])(e).encodedObject(f)
}

func (e *itemEncodings[O]) Frame(f wire.Format) ([]byte, error) {
	enc, err := (*item[O])(e).encodingIn(f)
	if err != nil {
		return nil, err
	}
	return enc.frame, nil
}

func (e *addedEncodings[O]) Object(f wire.Format) ([]byte, error) {
	return (*item[O])(e).encodedObject(f)
}

func (e *addedEncodings[O]) Frame(f wire.Format) ([]byte, error) {
	it := (*item[O])(e)
	enc, err := it.encodingIn(f)
	if err != nil || it.frameType == watch.Added {
		return enc.frameOrNil(), err
	}
	return enc.added.get(func() []byte {
		frame, _ := frameWith(f, watch.Added, enc.obj)
		return frame
	}), nil
}

func (e *encoding) frameOrNil() []byte {
	if e == nil {
		return nil
	}
	return e.frame
}

func (it *item[O]) encodedObject(f wire.Format) ([]byte, error) {
	enc, err := it.encodingIn(f)
	if err != nil {
		return nil, err
	}
	return enc.obj, nil
}

// listEncodings are a list's items' encodings, by index.
type listEncodings[O resource.Object] []*item[O]

func (l listEncodings[O]) At(i int) storage.Encodings { return l[i].addedEncodings() }
