package endpoints

import (
	"net/http"

	"github.com/apiloom/apiloom/server/endpoints/negotiation"
	"github.com/apiloom/apiloom/server/endpoints/request"
)

// The handlers' short names for the negotiated forms (package negotiation).
type (
	output   = negotiation.Output
	encoding = negotiation.Encoding
	target   = negotiation.Target
	answer   = negotiation.Answer
)

const (
	encJSON     = negotiation.JSON
	encYAML     = negotiation.YAML
	encCBOR     = negotiation.CBOR
	encProtobuf = negotiation.Protobuf

	asObject      = negotiation.AsObject
	asTable       = negotiation.AsTable
	asPartial     = negotiation.AsPartial
	asPartialList = negotiation.AsPartialList

	oneObject   = negotiation.OneObject
	objectList  = negotiation.ObjectList
	eventStream = negotiation.EventStream
)

// Media types the handlers read and write.
const (
	mediaJSON       = negotiation.MediaJSON
	mediaYAML       = negotiation.MediaYAML
	mediaJSONPatch  = negotiation.MediaJSONPatch
	mediaMergePatch = negotiation.MediaMergePatch
	mediaApplyPatch = negotiation.MediaApplyPatch
	mediaCBOR       = negotiation.MediaCBOR
	mediaApplyCBOR  = negotiation.MediaApplyCBOR
	mediaProtobuf   = negotiation.MediaProtobuf
)

// negotiate picks the response form for a's request: the Accept header's
// (negotiation.Negotiate), with a Table's options read from the query (400
// for bad ones) and compression on when the resource has
// ResponseCompression, the answer is not a watch and the client accepts
// gzip.
func (h *handler[O]) negotiate(r *http.Request, a answer) (output, error) {
	f := h.formats()
	out, err := negotiation.Negotiate(r, a, negotiation.Formats{Protobuf: f.Protobuf, CBOR: f.CBOR})
	if err == nil && out.Target == asTable {
		out.Table, err = request.TableOptions(r.URL.Query())
	}
	out.Gzip = h.limits.ResponseCompression && a != eventStream && negotiation.AcceptsGzip(r)
	return out, err
}
