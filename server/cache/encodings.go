package cache

import (
	"errors"
	"sync"
	"weak"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/wire"
)

// errUnknownFormat is asked for a format the cache does not encode.
var errUnknownFormat = errors.New("cache: unknown encoding format")

// formats are the formats besides JSON the cache keeps encodings in.
var formats = [...]wire.Format{wire.CBOR, wire.Protobuf}

// slot is f's index in an item's alternative encodings.
func slot(f wire.Format) (int, bool) {
	for i, g := range formats {
		if g == f {
			return i, true
		}
	}
	return 0, false
}

// alternatives are an item's encodings in the formats besides JSON, each
// made on the first request for it.
type alternatives [len(formats)]struct {
	once sync.Once
	enc  *encoding
}

// altEncodings holds an item's alternatives, made on the first request
// for any format, so that a cache whose clients all speak JSON pays no
// encoding for them.
//
// While the item is what an event in the history window carries, it
// holds them: every watcher of the event gets the same bytes, made once.
// Otherwise (a listed item, or one whose event has left the window) it
// holds them weakly, as sharedFrame holds a frame: shared while someone
// uses them, then left to the garbage collector. Held for the item's life,
// they grew with the objects stored: one protobuf client's sync of
// 100,000 objects kept its encodings in the cache for good, and the
// server's peak RSS grew by 300–500 MiB over the JSON rounds (the protobuf
// rounds of the 2026-11-28 side-by-side run). A list or a watch-list sync
// of an item held weakly encodes it once per request, as kube-apiserver
// does for every list; concurrent syncs still share.
type altEncodings struct {
	mu     sync.Mutex // guards the fields below
	pinned bool       // the item is an event's in the window
	held   *alternatives
	weak   weak.Pointer[alternatives]
}

// get returns the alternatives, made if nobody holds them.
func (a *altEncodings) get() *alternatives {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.held != nil {
		return a.held
	}
	if p := a.weak.Value(); p != nil {
		return p
	}
	p := new(alternatives)
	if a.pinned {
		a.held = p
	} else {
		a.weak = weak.Make(p)
	}
	return p
}

// pin makes the alternatives held from now on. It is called before the
// item is shared, so it takes no lock.
func (a *altEncodings) pin() { a.pinned = true }

// unpin lets the alternatives go once nobody uses them: the item's event
// has left the window.
func (a *altEncodings) unpin() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.held != nil {
		a.weak = weak.Make(a.held)
	}
	a.pinned, a.held = false, nil
}

// encoding is one item's encoding in one format: the object, the frame of
// the event that made the version, and its ADDED frame when that event
// was another.
type encoding struct {
	obj, frame []byte // obj is the end of frame
	err        error

	added sharedFrame
}

// encodingIn returns the item's encoding in f, made once while the
// alternatives live.
func (it *item[O]) encodingIn(f wire.Format) (*encoding, error) {
	i, ok := slot(f)
	if !ok {
		return nil, errUnknownFormat
	}
	s := &it.alt.get()[i]
	s.once.Do(func() {
		e := &encoding{}
		obj, err := wire.EncodeObjectAs(f, it.obj, it.obj.GetObjectKind().GroupVersionKind())
		if err != nil {
			e.err = err
		} else {
			e.frame, e.obj = frameWith(f, it.frameType, obj)
		}
		s.enc = e
	})
	return s.enc, s.enc.err
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
