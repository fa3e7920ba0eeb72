package endpoints

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// Every error response goes through writeStatusError: the handlers' (by
// writeError), the router's 404 and the server's own filters' (by
// WriteError). It answers in the encoding the request negotiates, as
// kube-apiserver's responsewriters.ErrorNegotiated does:
//
//   - no Accept header, */* or application/*: JSON;
//   - application/json, application/yaml, application/vnd.kubernetes.protobuf
//     (the Status in the runtime.Unknown envelope, for every kind, since a
//     Status has protobuf methods whether or not the kind has), and
//     application/cbor when the server serves CBOR; the first the header
//     names, by q;
//   - clauses asking for a view (as=, g=, v=) are skipped: an error is a
//     Status, never a Table; stream=watch is taken on every format but
//     YAML, so a watch that fails before its stream starts is answered in
//     the watch's format (application/cbor-seq is not one of them, as in
//     kube-apiserver);
//   - nothing acceptable: indented JSON with the error's own code, so a 406
//     is itself JSON (kube-apiserver's WriteRawJSON).

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
// encoding, as every handler here does; the server's own filters
// (authentication, timeouts, the in-flight limit) use it so that their
// errors look the same. It must be called before anything else was
// written.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	writeStatusError(w, r, toStatus(err), cborServed(r.Context()))
}

// writeError is WriteError for the router and the handlers of this package.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	WriteError(w, r, err)
}

// writeStatusError writes s, a failure, in the encoding r negotiates
// (cbor: whether CBOR is served).
func writeStatusError(w http.ResponseWriter, r *http.Request, s metav1.Status, cbor bool) {
	s.Kind, s.APIVersion = "Status", "v1"
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
	if enc, ok := negotiateError(r, cbor); ok {
		out := output{enc: enc}
		data, err := encodeView(&s, out)
		if err == nil && enc == encYAML {
			data, err = yaml.JSONToYAML(data)
		}
		if err == nil {
			return data, out.contentType()
		}
	}
	data, err := json.MarshalIndent(&s, "", "  ")
	if err != nil { // a Status always encodes; keep the client informed anyway
		data = encodeStatus(s)
	}
	return data, mediaJSON
}

// negotiateError picks the encoding of an error's Status from r's Accept
// header; ok is false when the header accepts none.
func negotiateError(r *http.Request, cbor bool) (enc encoding, ok bool) {
	if r == nil {
		return encJSON, true
	}
	header := strings.Join(r.Header.Values("Accept"), ",")
	if strings.TrimSpace(header) == "" {
		return encJSON, true
	}
	for _, c := range parseAccept(header) {
		if enc, ok := c.errorEncoding(cbor); ok {
			return enc, true
		}
	}
	return encJSON, false
}

// errorEncoding reports whether a Status can be written for this clause,
// and how, with the parameters kube-apiserver's default endpoint
// restrictions allow.
func (c acceptClause) errorEncoding(cbor bool) (encoding, bool) {
	var enc encoding
	switch c.mediaType {
	case "*/*", "application/*", mediaJSON:
		enc = encJSON
	case mediaYAML:
		enc = encYAML
	case mediaProtobuf:
		enc = encProtobuf
	case mediaCBOR:
		if !cbor {
			return enc, false
		}
		enc = encCBOR
	default:
		return enc, false
	}
	for k, v := range c.params {
		switch k {
		case "as", "g", "v": // a view; errors have none
			return enc, false
		case "sv":
			if v != "" {
				return enc, false
			}
		case "stream":
			if v != "" && (v != "watch" || enc == encYAML) {
				return enc, false
			}
		}
	}
	return enc, true
}
