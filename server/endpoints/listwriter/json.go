package listwriter

import (
	"encoding/json"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiloom/apiloom/server/endpoints/negotiation"
	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/wire"
)

// EncodeJSON writes items as one JSON document in the negotiated view: the
// resource's list kind, a Table, or a PartialObjectMetadataList. Items of
// the resource's own kind are copied from raw when it is given; items may
// then be nil (storage.ListOptions.Encoded) unless the view is a Table or
// metadata.
func EncodeJSON[O resource.Object](w io.Writer, l Lists, items []O, raw [][]byte, lm metav1.ListMeta, out negotiation.Output) error {
	if out.Target == negotiation.AsTable {
		t, err := table(l, items, raw, out)
		if err != nil {
			return err
		}
		t.ListMeta = lm
		data, err := json.Marshal(t)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}

	meta, err := json.Marshal(&lm)
	if err != nil {
		return err
	}
	kind, apiVersion := l.ListKind, l.Kind.GroupVersion().String()
	if out.Target == negotiation.AsPartialList {
		kind, apiVersion = "PartialObjectMetadataList", out.MetaAPIVersion()
	}
	head := fmt.Appendf(nil, `{"kind":%q,"apiVersion":%q,"metadata":%s,"items":[`, kind, apiVersion, meta)
	if _, err := w.Write(head); err != nil {
		return err
	}
	// Items go one at a time, without the newline json.Encoder adds, so
	// that the list is the bytes json.Marshal of the whole list would be
	// (plus the final newline apimachinery's serializer writes), whether
	// items come from raw or are encoded here.
	// A built-in kind's items carry no kind and apiVersion (Info.ListItemsTyped).
	itemKind, typed := l.Kind, l.ItemsTyped
	var prefix []byte
	if !typed {
		itemKind, prefix = schema.GroupVersionKind{}, wire.TypeMetaPrefix(l.Kind)
	}
	objects := wire.NewObjectWriter(w, itemKind)
	n := len(items)
	if items == nil {
		n = len(raw)
	}
	for i := range n {
		if i > 0 {
			if _, err := w.Write(comma); err != nil {
				return err
			}
		}
		switch {
		case out.Target == negotiation.AsPartialList:
			err = objects.WriteValue(out.PartialObject(items[i]))
		case raw != nil && !typed:
			err = wire.WriteUntyped(w, raw[i], prefix)
		case raw != nil:
			_, err = w.Write(raw[i])
		default:
			err = objects.Write(items[i])
		}
		if err != nil {
			return err
		}
	}
	_, err = w.Write(listTail)
	return err
}

var (
	comma    = []byte(",")
	listTail = []byte("]}\n")
)
