package endpoints

import (
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/wire"
)

// frameAs is ev's watch frame in CBOR or protobuf: the producer's, when
// it keeps one, or encoded here in the negotiated view.
func (e *eventEncoder[O]) frameAs(ev *storage.Event[O]) ([]byte, error) {
	f := wire.CBOR
	if e.out.Encoding == encProtobuf {
		f = wire.Protobuf
	}
	if e.out.Target == asObject && ev.Encodings != nil {
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
