package cache

import (
	"errors"
	"sync"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/wire"
)

// errUnknownFormat is asked for a format the cache does not encode.
var errUnknownFormat = errors.New("cache: unknown encoding format")

// cborEncoding is one item's CBOR: the object, the frame of the event that
// made the version, and its ADDED frame when that event was another. It is
// made on the first request for CBOR, so that a cache whose clients all
// speak JSON pays one pointer per item for it.
type cborEncoding struct {
	obj, frame []byte // obj is the end of frame
	err        error

	addedOnce sync.Once
	added     []byte // the ADDED frame when the item's frame is not one
}

// cbor returns the item's CBOR encoding, made once.
func (it *item[O]) cbor() *cborEncoding {
	it.cborOnce.Do(func() {
		e := &cborEncoding{}
		obj, err := wire.EncodeObjectCBOR(it.obj, it.obj.GetObjectKind().GroupVersionKind())
		if err != nil {
			e.err = err
		} else {
			e.frame, e.obj = newCBORFrame(it.frameType, obj)
		}
		it.cborEnc = e
	})
	return it.cborEnc
}

// newCBORFrame is newFrame for CBOR: the frame, and the object as its end.
func newCBORFrame(typ watch.EventType, obj []byte) (frame, objInFrame []byte) {
	t := string(typ)
	frame = wire.AppendCBORWatchFrame(make([]byte, 0, wire.CBORWatchFrameSize(t, obj)), t, obj)
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
	if f != wire.CBOR {
		return nil, errUnknownFormat
	}
	c := (*item[O])(e).cbor()
	return c.frame, c.err
}

func (e *addedEncodings[O]) Object(f wire.Format) ([]byte, error) {
	return (*item[O])(e).encodedObject(f)
}

func (e *addedEncodings[O]) Frame(f wire.Format) ([]byte, error) {
	if f != wire.CBOR {
		return nil, errUnknownFormat
	}
	it := (*item[O])(e)
	c := it.cbor()
	if c.err != nil || it.frameType == watch.Added {
		return c.frame, c.err
	}
	c.addedOnce.Do(func() { c.added, _ = newCBORFrame(watch.Added, c.obj) })
	return c.added, nil
}

func (it *item[O]) encodedObject(f wire.Format) ([]byte, error) {
	if f != wire.CBOR {
		return nil, errUnknownFormat
	}
	c := it.cbor()
	return c.obj, c.err
}

// listEncodings are a list's items' encodings, by index.
type listEncodings[O resource.Object] []*item[O]

func (l listEncodings[O]) At(i int) storage.Encodings { return l[i].addedEncodings() }
