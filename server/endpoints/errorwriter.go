package endpoints

import (
	"net/http"

	"github.com/apiloom/apiloom/server/endpoints/responsewriters"
)

// WithCBOR is responsewriters.WithCBOR, for the server's filters.
func WithCBOR(next http.Handler, served bool) http.Handler {
	return responsewriters.WithCBOR(next, served)
}

// WriteError is responsewriters.WriteError, for the server's filters.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	responsewriters.WriteError(w, r, err)
}
