package negotiation

import (
	"net/http"
	"strings"
)

// ErrorEncoding picks the encoding of an error's Status from r's Accept
// header (cbor: whether CBOR is served); ok is false when the header
// accepts none. It answers as kube-apiserver's
// responsewriters.ErrorNegotiated does:
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
//     kube-apiserver).
func ErrorEncoding(r *http.Request, cbor bool) (enc Encoding, ok bool) {
	if r == nil {
		return JSON, true
	}
	header := strings.Join(r.Header.Values("Accept"), ",")
	if strings.TrimSpace(header) == "" {
		return JSON, true
	}
	for _, c := range parseAccept(header) {
		if enc, ok := c.errorEncoding(cbor); ok {
			return enc, true
		}
	}
	return JSON, false
}

// errorEncoding reports whether a Status can be written for this clause,
// and how, with the parameters kube-apiserver's default endpoint
// restrictions allow.
func (c acceptClause) errorEncoding(cbor bool) (Encoding, bool) {
	var enc Encoding
	switch c.mediaType {
	case "*/*", "application/*", MediaJSON:
		enc = JSON
	case MediaYAML:
		enc = YAML
	case MediaProtobuf:
		enc = Protobuf
	case MediaCBOR:
		if !cbor {
			return enc, false
		}
		enc = CBOR
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
			if v != "" && (v != "watch" || enc == YAML) {
				return enc, false
			}
		}
	}
	return enc, true
}
