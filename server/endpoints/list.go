package endpoints

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiloom/apiloom/server/endpoints/request"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/wire"
)

// listOrWatch serves GET on a collection (and GET ?watch=true on a single
// object, a watch of that one name).
func (h *handler[O]) listOrWatch(w http.ResponseWriter, r *http.Request, rt route) error {
	lr, err := h.parseListOptions(r.URL.Query(), rt.namespace, rt.name)
	if err != nil {
		return err
	}
	a := objectList
	if lr.Watch {
		a = eventStream
	}
	out, err := h.negotiate(r, a)
	if err != nil {
		return err
	}
	if lr.Watch {
		return h.watch(w, r, lr, out)
	}
	return h.list(w, r, lr, out)
}

// list serves a list. The items are encoded straight to the response one by
// one (through the gzip writer when the list is compressed), so a large list
// never exists as one buffer: memory per list is one item's encoding plus
// the writers' buffers. Only YAML, a rare request, is built whole to be
// converted.
func (h *handler[O]) list(w http.ResponseWriter, r *http.Request, lr request.List, out output) error {
	v := verbList
	if lr.Options.Continue != "" {
		v = verbContinue
	}
	list, err := h.store.GetList(r.Context(), lr.Options)
	if err != nil {
		return storageStatus(err, h.gr, "", v)
	}
	return h.writeList(w, r, out, list.Items, list.Raw, list.Encodings, metav1.ListMeta{
		ResourceVersion:    storage.FormatResourceVersion(list.ResourceVersion),
		Continue:           list.Continue,
		RemainingItemCount: list.RemainingItemCount,
	})
}

// writeList answers with items as one list in the negotiated form. raw,
// when not nil, is each item already encoded as JSON (storage.List.Raw),
// and enc, when not nil, in other formats (storage.List.Encodings).
func (h *handler[O]) writeList(w http.ResponseWriter, r *http.Request, out output, items []O, raw [][]byte, enc storage.ListEncodings, lm metav1.ListMeta) error {
	if out.enc == encYAML {
		var buf bytes.Buffer
		if err := h.encodeList(&buf, items, raw, lm, out); err != nil {
			return err
		}
		return writeEncoded(w, out, http.StatusOK, buf.Bytes(), nil)
	}
	w.Header().Set("Content-Type", out.contentType())
	body := newBodyWriter(w, http.StatusOK, out.gzip)
	var err error
	switch out.enc {
	case encCBOR:
		err = h.encodeCBORList(body, items, enc, lm, out)
	case encProtobuf:
		err = h.encodeProtobufList(body, items, enc, lm, out)
	default:
		err = h.encodeList(body, items, raw, lm, out)
	}
	if cerr := body.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		streamFailed(r, "list", err)
	}
	return nil
}

// encodeList writes items as one JSON document in the negotiated view: the
// resource's list kind, a Table, or a PartialObjectMetadataList. Items of
// the resource's own kind are copied from raw when it is given.
func (h *handler[O]) encodeList(w io.Writer, items []O, raw [][]byte, lm metav1.ListMeta, out output) error {
	if out.target == asTable {
		t, err := h.table(items, raw, out, true)
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
	kind, apiVersion := h.def.ListKind, h.gvk.GroupVersion().String()
	if out.target == asPartialList {
		kind, apiVersion = "PartialObjectMetadataList", out.metaAPIVersion()
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
	itemKind, typed := h.gvk, h.def.ListItemsTyped()
	var prefix []byte
	if !typed {
		itemKind, prefix = schema.GroupVersionKind{}, wire.TypeMetaPrefix(h.gvk)
	}
	objects := wire.NewObjectWriter(w, itemKind)
	for i, item := range items {
		if i > 0 {
			if _, err := w.Write(comma); err != nil {
				return err
			}
		}
		switch {
		case out.target == asPartialList:
			err = objects.WriteValue(partialObject(item, out))
		case raw != nil && !typed:
			err = wire.WriteUntyped(w, raw[i], prefix)
		case raw != nil:
			_, err = w.Write(raw[i])
		default:
			err = objects.Write(item)
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

// parseListOptions parses a list or watch request (request.ParseList)
// against the resource's selectable fields. name is the object name of a
// single-object watch path, "" otherwise.
func (h *handler[O]) parseListOptions(q url.Values, namespace, name string) (request.List, error) {
	return request.ParseList(q, namespace, name, request.SelectableFields{
		Keys:         h.fieldKeys,
		MetadataOnly: h.def.BuiltIn && len(h.def.SelectableFields) == 0,
	})
}
