package endpoints

import (
	"net/http"

	"github.com/apiloom/apiloom/server/endpoints/negotiation"
	"github.com/apiloom/apiloom/server/endpoints/responsewriters"
	"github.com/apiloom/apiloom/server/endpoints/storageerr"
	"github.com/apiloom/apiloom/server/internal/tracing"
	"github.com/apiloom/apiloom/server/storage"
)

// get serves GET of one object (or its status subresource, which reads
// the same object). ?resourceVersion= is passed to storage: "" is a
// consistent read, "0" any state, N at least N.
func (h *handler[O]) get(w http.ResponseWriter, r *http.Request, rt route) error {
	out, err := h.negotiate(r, negotiation.OneObject)
	if err != nil {
		return err
	}
	opts := storage.GetOptions{ResourceVersion: r.URL.Query().Get("resourceVersion")}
	var obj O
	var raw []byte
	if eg, ok := h.store.(storage.EncodedGetter[O]); ok {
		obj, raw, err = eg.GetEncoded(r.Context(), h.key(rt), opts)
	} else {
		obj, err = h.store.Get(r.Context(), h.key(rt), opts)
	}
	if err != nil {
		return storageerr.Status(err, h.gr, rt.name, storageerr.Other)
	}
	if raw != nil && out.Target == negotiation.AsObject && (out.Encoding == negotiation.JSON || out.Encoding == negotiation.YAML) &&
		obj.GetObjectKind().GroupVersionKind() == h.gvk {
		// The store's JSON is what encodeObject would write.
		h.auditResponse(r.Context(), obj, false)
		span := startSerialize(r.Context(), out, http.StatusOK)
		err := responsewriters.WriteEncoded(w, out, http.StatusOK, raw, nil)
		tracing.End(span, err)
		return err
	}
	return h.writeObject(w, r, out, http.StatusOK, obj, nil)
}
