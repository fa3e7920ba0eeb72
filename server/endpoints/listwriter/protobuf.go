package listwriter

import (
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/endpoints/negotiation"
	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/wire"
)

// EncodeProtobuf writes items as one protobuf document, item by item as
// EncodeJSON does for JSON: the bytes apimachinery's protobuf serializer
// writes for the whole list. The envelope announces the list's length, so
// each item's size is taken first, by Size. The items are then written
// from enc when the producer keeps them encoded (the watch cache), else
// marshalled. Sizes come from Size even with enc: the cache keeps an
// item's protobuf only while an event in its window carries the item or a
// reader uses it, so encoding every item to learn its size would make a
// second encoding of most items, or hold them all until the write.
func EncodeProtobuf[O resource.Object](w io.Writer, l Lists, items []O, enc storage.ListEncodings, lm metav1.ListMeta, out negotiation.Output) error {
	kind, apiVersion := l.ListKind, l.Kind.GroupVersion().String()
	partial := out.Target == negotiation.AsPartialList
	if partial {
		kind, apiVersion = "PartialObjectMetadataList", out.MetaAPIVersion()
	}
	// message returns item i's encoding, or only its size when sizeOnly.
	message := func(i int, sizeOnly bool) ([]byte, int, error) {
		var m wire.ProtoMessage
		switch {
		case partial:
			m = out.PartialObject(items[i])
		case enc != nil && !sizeOnly:
			doc, err := enc.At(i).Object(wire.Protobuf)
			if err != nil {
				return nil, 0, err
			}
			msg, err := wire.ProtobufMessage(doc)
			return msg, len(msg), err
		default:
			var ok bool
			if m, ok = any(items[i]).(wire.ProtoMessage); !ok {
				return nil, 0, wire.ErrNoProtobuf
			}
		}
		if sizeOnly {
			return nil, m.Size(), nil
		}
		b, err := m.Marshal()
		return b, len(b), err
	}
	sizes := make([]int, len(items))
	for i := range items {
		var err error
		if _, sizes[i], err = message(i, true); err != nil {
			return err
		}
	}
	lw, err := wire.NewProtobufListWriter(w, apiVersion, kind, &lm, sizes)
	if err != nil {
		return err
	}
	for i := range items {
		msg, _, err := message(i, false)
		if err == nil {
			err = lw.Write(msg)
		}
		if err != nil {
			return err
		}
	}
	return lw.Close()
}
