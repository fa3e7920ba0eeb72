package endpoints

import (
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/endpoints/negotiation"
	"github.com/apiloom/apiloom/server/endpoints/responsewriters"
	"github.com/apiloom/apiloom/server/endpoints/tableconvert"
	"github.com/apiloom/apiloom/server/internal/tracing"
	"github.com/apiloom/apiloom/server/wire"
)

// writeObject answers with one object in the negotiated form: the object
// itself, a one-row Table or its PartialObjectMetadata. Errors it returns
// were found before anything was written; as negotiate validated the form,
// they can only be encoding failures.
func (h *handler[O]) writeObject(w http.ResponseWriter, r *http.Request, out negotiation.Output, code int, obj O, warnings []string) error {
	span := startSerialize(r.Context(), out, code)
	err := h.encodeAndWrite(w, r, out, code, obj, warnings)
	tracing.End(span, err)
	return err
}

// encodeAndWrite is writeObject, untraced.
func (h *handler[O]) encodeAndWrite(w http.ResponseWriter, r *http.Request, out negotiation.Output, code int, obj O, warnings []string) error {
	var data []byte
	var err error
	switch out.Target {
	case negotiation.AsObject:
		data, err = h.encodeObject(obj, out)
		h.auditResponse(r.Context(), obj, false)
	case negotiation.AsTable:
		var t *metav1.Table
		if t, err = h.table([]O{obj}, nil, out, true); err == nil {
			t.ResourceVersion = obj.GetResourceVersion()
			data, err = responsewriters.EncodeView(t, out)
			h.auditResponse(r.Context(), t, true)
		}
	default: // negotiation.AsPartial; negotiate refused the list view
		p := out.PartialObject(obj)
		data, err = responsewriters.EncodeView(p, out)
		h.auditResponse(r.Context(), p, true)
	}
	if err != nil {
		return err
	}
	return responsewriters.WriteEncoded(w, out, code, data, warnings)
}

// encodeObject encodes obj, of the resource's kind, as out asks.
func (h *handler[O]) encodeObject(obj O, out negotiation.Output) ([]byte, error) {
	switch out.Encoding {
	case negotiation.CBOR:
		return wire.EncodeObjectCBOR(obj, h.gvk)
	case negotiation.Protobuf:
		return wire.EncodeObjectProtobuf(obj, h.gvk)
	}
	return wire.EncodeObject(obj, h.gvk)
}

// table renders items as a Table with the resource's columns, its ages
// measured by the handler's clock (tableconvert.Table).
func (h *handler[O]) table(items []O, raw [][]byte, out negotiation.Output, headers bool) (*metav1.Table, error) {
	return tableconvert.Table(h.columns, items, raw, out, headers, h.now())
}
