package endpoints

import (
	"bytes"
	"net/http"

	auditinternal "k8s.io/apiserver/pkg/apis/audit"

	"github.com/apiloom/apiloom/server/endpoints/auditlog"
	"github.com/apiloom/apiloom/server/endpoints/negotiation"
	"github.com/apiloom/apiloom/server/endpoints/responsewriters"
	"github.com/apiloom/apiloom/server/endpoints/storageerr"
	"github.com/apiloom/apiloom/server/internal/tracing"
	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/wire"
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
	// The object in JSON (or YAML, made from it) is the store's JSON when
	// the store keeps it; the object itself is needed only to audit the
	// response.
	writesJSON := out.Target == negotiation.AsObject && (out.Encoding == negotiation.JSON || out.Encoding == negotiation.YAML)
	var obj O
	var raw []byte
	if eg, ok := h.store.(storage.EncodedGetter[O]); ok {
		encoded := opts
		encoded.Encoded = writesJSON && auditlog.Level(r.Context()).Less(auditinternal.LevelRequestResponse)
		obj, raw, err = eg.GetEncoded(r.Context(), h.key(rt), encoded)
	} else {
		obj, err = h.store.Get(r.Context(), h.key(rt), opts)
	}
	if err != nil {
		return storageerr.Status(err, h.gr, rt.name, storageerr.Other)
	}
	if raw != nil && writesJSON && h.isOwnKind(obj, raw) {
		// The store's JSON is what encodeObject would write.
		if !isZero(obj) {
			h.auditResponse(r.Context(), obj, false)
		}
		span := startSerialize(r.Context(), out, http.StatusOK)
		err := responsewriters.WriteEncoded(w, out, http.StatusOK, raw, nil)
		tracing.End(span, err)
		return err
	}
	if isZero(obj) {
		// Not the resource's kind after all: decode it.
		if obj, err = h.store.Get(r.Context(), h.key(rt), opts); err != nil {
			return storageerr.Status(err, h.gr, rt.name, storageerr.Other)
		}
	}
	return h.writeObject(w, r, out, http.StatusOK, obj, nil)
}

// isOwnKind reports whether raw, the store's JSON of obj (or of an object
// it did not decode, obj then the zero value), is of the resource's kind.
func (h *handler[O]) isOwnKind(obj O, raw []byte) bool {
	if isZero(obj) {
		return bytes.HasPrefix(raw, wire.TypeMetaPrefix(h.gvk))
	}
	return obj.GetObjectKind().GroupVersionKind() == h.gvk
}

// isZero reports whether obj is the zero value: an object a store did not
// decode (storage.GetOptions.Encoded).
func isZero[O resource.Object](obj O) bool {
	var zero O
	return any(obj) == any(zero)
}
