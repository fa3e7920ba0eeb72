package listwriter

import (
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiloom/apiloom/server/endpoints/negotiation"
	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/wire"
)

// EncodeCBOR writes items as one CBOR document in the negotiated view,
// item by item as EncodeJSON does for JSON: the bytes apimachinery's CBOR
// serializer writes for the whole list. Items of the resource's own kind
// are copied from enc when the producer keeps their CBOR (the watch cache
// encodes each object once for every list).
func EncodeCBOR[O resource.Object](w io.Writer, l Lists, items []O, enc storage.ListEncodings, lm metav1.ListMeta, out negotiation.Output) error {
	if out.Target == negotiation.AsTable {
		t, err := table(l, items, nil, out)
		if err != nil {
			return err
		}
		t.ListMeta = lm
		data, err := wire.EncodeCBOR(t)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}
	kind, apiVersion := l.ListKind, l.Kind.GroupVersion().String()
	if out.Target == negotiation.AsPartialList {
		kind, apiVersion = "PartialObjectMetadataList", out.MetaAPIVersion()
	}
	// A built-in kind's items carry no kind and apiVersion
	// (Info.ListItemsTyped): encoded here, not taken from the cache's
	// encodings, which carry them.
	itemKind, typed := l.Kind, l.ItemsTyped
	if !typed {
		itemKind = schema.GroupVersionKind{}
	}
	lw, err := wire.NewCBORListWriter(w, kind, itemKind, len(items))
	if err != nil {
		return err
	}
	for i, item := range items {
		switch {
		case out.Target == negotiation.AsPartialList:
			err = lw.WriteValue(out.PartialObject(item))
		case enc != nil && typed:
			var data []byte
			if data, err = enc.At(i).Object(wire.CBOR); err == nil {
				err = lw.WriteEncoded(data)
			}
		default:
			err = lw.Write(item)
		}
		if err != nil {
			return err
		}
	}
	return lw.Close(&lm, apiVersion)
}
