package endpoints

import (
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/wire"
)

// encodeCBORList writes items as one CBOR document in the negotiated
// view, item by item as encodeList does for JSON: the bytes
// apimachinery's CBOR serializer writes for the whole list. Items of the
// resource's own kind are copied from enc when the producer keeps their
// CBOR (the watch cache encodes each object once for every list).
func (h *handler[O]) encodeCBORList(w io.Writer, items []O, enc storage.ListEncodings, lm metav1.ListMeta, out output) error {
	if out.target == asTable {
		t, err := h.table(items, nil, out, true)
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
	kind, apiVersion := h.def.ListKind, h.gvk.GroupVersion().String()
	if out.target == asPartialList {
		kind, apiVersion = "PartialObjectMetadataList", out.metaAPIVersion()
	}
	// A built-in kind's items carry no kind and apiVersion
	// (Info.ListItemsTyped): encoded here, not taken from the cache's
	// encodings, which carry them.
	itemKind, typed := h.gvk, h.def.ListItemsTyped()
	if !typed {
		itemKind = schema.GroupVersionKind{}
	}
	lw, err := wire.NewCBORListWriter(w, kind, itemKind, len(items))
	if err != nil {
		return err
	}
	for i, item := range items {
		switch {
		case out.target == asPartialList:
			err = lw.WriteValue(partialObject(item, out))
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
