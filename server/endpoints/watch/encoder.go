package watch

import (
	kwatch "k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/wire"
)

// Format is the syntax of a watch's frames.
type Format uint8

const (
	JSON     Format = iota // one JSON WatchEvent per frame
	CBOR                   // one CBOR document per frame (application/cbor-seq)
	Protobuf               // one length-prefixed protobuf WatchEvent per frame
)

// Form is what the encoder needs of the watch's negotiated form.
type Form struct {
	Format Format
	// Whole is true when the frames carry the objects themselves rather
	// than a view of them (a Table, their metadata): a frame the producer
	// encoded is then sent as it is.
	Whole bool
}

// A View encodes what a watch's frames carry in the negotiated form; the
// handler that negotiated it provides one. Its encodings are in the
// Form's Format.
type View[O resource.Object] interface {
	// Object encodes obj: the object itself, a one-row Table, or its
	// metadata. headers is true until an object was encoded: only the
	// first Table event carries the column definitions.
	Object(obj O, headers bool) ([]byte, error)
	// Status encodes the Status that reports err, the watch's last event.
	Status(err error) []byte
}

// Encoder turns events into watch frames in the negotiated form. It is
// used by one watch's goroutine.
//
// An idle watch.Source holds one, so its small fields come last, where
// they share a word.
type Encoder[O resource.Object, V View[O]] struct {
	view V
	buf  []byte // the last frame; reused
	form Form
	// headers is true until the first object is encoded (View.Object).
	headers bool
}

// NewEncoder returns the encoder of a watch negotiated as form whose
// objects view encodes.
func NewEncoder[O resource.Object, V View[O]](form Form, view V) Encoder[O, V] {
	return Encoder[O, V]{form: form, view: view, headers: true}
}

// WritesFrames reports whether Frame writes an event's Frame whenever it
// is set, never reading the event's Object then
// (storage.ListOptions.Encoded).
func (e *Encoder[O, V]) WritesFrames() bool { return e.form.Format == JSON && e.form.Whole }

// Frame returns ev's frame. A frame the producer encoded (the watch cache
// encodes each event once for all watchers, in each format asked for) is
// used as it is; the returned slice is valid until the next call.
func (e *Encoder[O, V]) Frame(ev *storage.Event[O]) ([]byte, error) {
	if e.form.Format == CBOR || e.form.Format == Protobuf {
		return e.frameAs(ev)
	}
	if e.form.Whole && ev.Frame != nil {
		return ev.Frame, nil
	}
	obj, err := e.object(ev)
	if err != nil {
		return nil, err
	}
	e.buf = wire.AppendWatchFrame(e.buf[:0], string(ev.Type), obj)
	return e.buf, nil
}

// frameAs is ev's watch frame in CBOR or protobuf: the producer's, when
// it keeps one, or encoded here in the negotiated view.
func (e *Encoder[O, V]) frameAs(ev *storage.Event[O]) ([]byte, error) {
	f := wire.CBOR
	if e.form.Format == Protobuf {
		f = wire.Protobuf
	}
	if e.form.Whole && ev.Encodings != nil {
		if frame, err := ev.Encodings.Frame(f); err == nil {
			return frame, nil
		}
	}
	obj, err := e.object(ev)
	if err != nil {
		return nil, err
	}
	if f == wire.Protobuf {
		e.buf = wire.AppendProtobufWatchFrame(e.buf[:0], string(ev.Type), obj)
	} else {
		e.buf = wire.AppendCBORWatchFrame(e.buf[:0], string(ev.Type), obj)
	}
	return e.buf, nil
}

// object encodes ev's object in the negotiated view and encoding.
func (e *Encoder[O, V]) object(ev *storage.Event[O]) ([]byte, error) {
	data, err := e.view.Object(ev.Object, e.headers)
	if err != nil {
		return nil, err
	}
	e.headers = false
	return data, nil
}

// errorFrame is the ERROR event that reports err and ends the stream.
func (e *Encoder[O, V]) errorFrame(err error) []byte {
	st := e.view.Status(err)
	switch e.form.Format {
	case CBOR:
		return wire.AppendCBORWatchFrame(nil, string(kwatch.Error), st)
	case Protobuf:
		return wire.AppendProtobufWatchFrame(nil, string(kwatch.Error), st)
	}
	return wire.AppendWatchFrame(nil, string(kwatch.Error), st)
}
