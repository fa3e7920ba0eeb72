package endpoints

import (
	"net/http"

	"github.com/apiloom/apiloom/server/endpoints/negotiation"
	"github.com/apiloom/apiloom/server/endpoints/request"
)

// The handlers' short names for the negotiated forms (package negotiation).
// negotiate picks the response form for a's request: the Accept header's
// (negotiation.Negotiate), with a Table's options read from the query (400
// for bad ones) and compression on when the resource has
// ResponseCompression, the answer is not a watch and the client accepts
// gzip.
func (h *handler[O]) negotiate(r *http.Request, a negotiation.Answer) (negotiation.Output, error) {
	f := h.formats()
	out, err := negotiation.Negotiate(r, a, negotiation.Formats{Protobuf: f.Protobuf, CBOR: f.CBOR})
	if err == nil && out.Target == negotiation.AsTable {
		out.Table, err = request.TableOptions(r.URL.Query())
	}
	out.Gzip = h.limits.ResponseCompression && a != negotiation.EventStream && negotiation.AcceptsGzip(r)
	return out, err
}
