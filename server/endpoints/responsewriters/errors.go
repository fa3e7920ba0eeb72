package responsewriters

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/apiloom/apiloom/server/endpoints/auditlog"
	"github.com/apiloom/apiloom/server/endpoints/negotiation"
)

// Every error response goes through WriteStatusError: the handlers', the
// router's 404 and the server's own filters' (by WriteError). It answers
// in the encoding the request negotiates (negotiation.ErrorEncoding), as
// kube-apiserver's responsewriters.ErrorNegotiated does; when nothing is
// acceptable, with indented JSON and the error's own code, so a 406 is
// itself JSON (kube-apiserver's WriteRawJSON).

// cborServedKey marks a request's context with whether the server serves
// CBOR (WithCBOR).
type cborServedKey struct{}

// WithCBOR tells WriteError and the router's 404 whether CBOR is served
// (the CBORServingAndStorage gate), for the errors of requests that no
// resource handler has seen yet; resource handlers know it themselves.
func WithCBOR(next http.Handler, served bool) http.Handler {
	if !served {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), cborServedKey{}, true)))
	})
}

// cborServed reports whether WithCBOR marked ctx.
func cborServed(ctx context.Context) bool {
	on, _ := ctx.Value(cborServedKey{}).(bool)
	return on
}

// WriteError answers r with err as a metav1.Status in the negotiated
// encoding, as every handler does; the server's own filters
// (authentication, timeouts, the in-flight limit) use it so that their
// errors look the same. It must be called before anything else was
// written.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	WriteStatusError(w, r, ToStatus(err), cborServed(r.Context()))
}

// WriteStatusError writes s, a failure, in the encoding r negotiates
// (cbor: whether CBOR is served).
func WriteStatusError(w http.ResponseWriter, r *http.Request, s metav1.Status, cbor bool) {
	s.Kind, s.APIVersion = "Status", "v1"
	auditlog.ResponseObject(r.Context(), &s, encodeStatusJSON)
	if s.Details != nil && s.Details.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", fmt.Sprint(s.Details.RetryAfterSeconds))
	}
	data, contentType := encodeError(s, r, cbor)
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(int(s.Code))
	_, _ = w.Write(data)
}

// encodeError encodes s, with its kind set, for r and returns the bytes and
// their media type.
func encodeError(s metav1.Status, r *http.Request, cbor bool) ([]byte, string) {
	if enc, ok := negotiation.ErrorEncoding(r, cbor); ok {
		out := negotiation.Output{Encoding: enc}
		data, err := EncodeView(&s, out)
		if err == nil && enc == negotiation.YAML {
			data, err = yaml.JSONToYAML(data)
		}
		if err == nil {
			return data, out.ContentType()
		}
	}
	data, err := json.MarshalIndent(&s, "", "  ")
	if err != nil { // a Status always encodes; keep the client informed anyway
		data = EncodeStatus(s)
	}
	return data, negotiation.MediaJSON
}

// encodeStatusJSON encodes a Status for the request's audit event.
func encodeStatusJSON(obj runtime.Object) ([]byte, error) { return json.Marshal(obj) }
