package endpoints

import (
	"net/http"

	"github.com/apiloom/apiloom/server/storage"
)

// get serves GET of one object (or its status subresource, which reads
// the same object). ?resourceVersion= is passed to storage: "" is a
// consistent read, "0" any state, N at least N.
func (h *handler[O]) get(w http.ResponseWriter, r *http.Request, rt route) error {
	out, err := h.negotiate(r, oneObject)
	if err != nil {
		return err
	}
	obj, err := h.store.Get(r.Context(), h.key(rt), storage.GetOptions{ResourceVersion: r.URL.Query().Get("resourceVersion")})
	if err != nil {
		return storageStatus(err, h.gr, rt.name, verbOther)
	}
	return h.writeObject(w, out, http.StatusOK, obj, nil)
}
