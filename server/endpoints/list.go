package endpoints

import (
	"io"
	"net/http"
	"net/url"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/endpoints/listwriter"
	"github.com/apiloom/apiloom/server/endpoints/negotiation"
	"github.com/apiloom/apiloom/server/endpoints/request"
	"github.com/apiloom/apiloom/server/endpoints/storageerr"
	"github.com/apiloom/apiloom/server/internal/tracing"
	"github.com/apiloom/apiloom/server/storage"
)

// listOrWatch serves GET on a collection (and GET ?watch=true on a single
// object, a watch of that one name).
func (h *handler[O]) listOrWatch(w http.ResponseWriter, r *http.Request, rt route) error {
	lr, err := h.parseListOptions(r.URL.Query(), rt.namespace, rt.name)
	if err != nil {
		return err
	}
	a := negotiation.ObjectList
	if lr.Watch {
		a = negotiation.EventStream
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
func (h *handler[O]) list(w http.ResponseWriter, r *http.Request, lr request.List, out negotiation.Output) error {
	v := storageerr.List
	if lr.Options.Continue != "" {
		v = storageerr.Continue
	}
	// The resource's own list in JSON (or YAML, made from it) is written
	// from the items' JSON: a store that keeps it need not decode them.
	lr.Options.Encoded = out.Target == negotiation.AsObject && (out.Encoding == negotiation.JSON || out.Encoding == negotiation.YAML)
	list, err := h.store.GetList(r.Context(), lr.Options)
	if err != nil {
		return storageerr.Status(err, h.gr, "", v)
	}
	return h.writeList(w, r, out, list.Items, list.Raw, list.Encodings, metav1.ListMeta{
		ResourceVersion:    storage.FormatResourceVersion(list.ResourceVersion),
		Continue:           list.Continue,
		RemainingItemCount: list.RemainingItemCount,
	})
}

// writeList answers with items as one list in the negotiated form
// (listwriter.Write).
func (h *handler[O]) writeList(w http.ResponseWriter, r *http.Request, out negotiation.Output, items []O, raw [][]byte, enc storage.ListEncodings, lm metav1.ListMeta) error {
	h.auditList(r.Context(), items, raw, lm, out)
	span := startSerialize(r.Context(), out, http.StatusOK)
	err := listwriter.Write(w, r, h.lists(), out, items, raw, enc, lm)
	tracing.End(span, err)
	return err
}

// encodeList writes items as one JSON document in the negotiated view
// (listwriter.EncodeJSON).
func (h *handler[O]) encodeList(w io.Writer, items []O, raw [][]byte, lm metav1.ListMeta, out negotiation.Output) error {
	return listwriter.EncodeJSON(w, h.lists(), items, raw, lm, out)
}

// lists says what the resource's lists are made of.
func (h *handler[O]) lists() listwriter.Lists {
	return listwriter.Lists{
		Kind: h.gvk, ListKind: h.def.ListKind, ItemsTyped: h.def.ListItemsTyped(),
		Columns: h.columns, Now: h.now,
	}
}

// parseListOptions parses a list or watch request (request.ParseList)
// against the resource's selectable fields. name is the object name of a
// single-object watch path, "" otherwise.
func (h *handler[O]) parseListOptions(q url.Values, namespace, name string) (request.List, error) {
	return request.ParseList(q, namespace, name, request.SelectableFields{
		Keys:         h.fieldKeys,
		MetadataOnly: h.def.BuiltIn && len(h.def.SelectableFields) == 0,
	})
}
