package negotiation

import (
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Formats are the syntaxes a resource writes besides JSON and YAML, which
// every endpoint does.
type Formats struct {
	// Protobuf: the kind has protobuf methods.
	Protobuf bool
	// CBOR: CBOR is served.
	CBOR bool
}

// Negotiate picks the response form from the Accept header and checks
// that the view fits the answer, so that a request fails before it
// changes anything (406 for a view that does not fit). A Table's options
// are the caller's to read and check.
func Negotiate(r *http.Request, a Answer, f Formats) (Output, error) {
	out, err := negotiateMedia(r, a == EventStream, f)
	if err != nil {
		return out, err
	}
	switch {
	case out.Target == AsPartial && a == ObjectList:
		return out, notAcceptableView("you requested PartialObjectMetadata, but the requested object is a list")
	case out.Target == AsPartialList && a != ObjectList:
		return out, notAcceptableView("you requested PartialObjectMetadataList, but the requested object is not a list")
	}
	return out, nil
}

// negotiateMedia picks the response form from the Accept header. Clauses
// are tried from the highest q down, in header order among equals, and the
// first this server can produce wins. An empty header, */*,
// application/*, or any list that contains application/json gets JSON,
// even when protobuf comes first (client-go lists it first when it prefers
// it). stream is true for watches, which have no YAML form. CBOR and
// protobuf are served when f has them. Nothing acceptable is 406
// NotAcceptable.
func negotiateMedia(r *http.Request, stream bool, f Formats) (Output, error) {
	header := strings.Join(r.Header.Values("Accept"), ",")
	if strings.TrimSpace(header) == "" {
		return Output{}, nil
	}
	for _, c := range parseAccept(header) {
		if o, ok := c.output(stream, f); ok {
			return o, nil
		}
	}
	accepted := []string{MediaJSON}
	if !stream {
		accepted = append(accepted, MediaYAML)
	}
	if f.Protobuf {
		accepted = append(accepted, MediaProtobuf)
	}
	if f.CBOR {
		accepted = append(accepted, MediaCBOR)
	}
	return Output{}, &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusNotAcceptable,
		Reason:  metav1.StatusReasonNotAcceptable,
		Message: "only the following media types are accepted: " + strings.Join(accepted, ", "),
	}}
}

// acceptClause is one media range of an Accept header.
type acceptClause struct {
	mediaType string            // lower-case type/subtype
	params    map[string]string // parameters other than q
	q         float64
}

// parseAccept splits an Accept header into clauses ordered by preference.
// Clauses that do not parse or have q=0 are dropped.
func parseAccept(header string) []acceptClause {
	var out []acceptClause
	for _, part := range strings.Split(header, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		mt, params, err := mime.ParseMediaType(part)
		if err != nil {
			continue
		}
		c := acceptClause{mediaType: mt, params: params, q: 1}
		if qs, ok := params["q"]; ok {
			q, err := strconv.ParseFloat(qs, 64)
			if err != nil || q <= 0 {
				continue
			}
			c.q = q
			delete(params, "q")
		}
		out = append(out, c)
	}
	slices.SortStableFunc(out, func(a, b acceptClause) int {
		switch {
		case a.q > b.q:
			return -1
		case a.q < b.q:
			return 1
		}
		return 0
	})
	return out
}

// output reports whether the server can answer this clause, and how.
func (c acceptClause) output(stream bool, f Formats) (Output, bool) {
	var o Output
	switch c.mediaType {
	case "*/*", "application/*":
		return o, true
	case MediaJSON:
	case MediaYAML, "text/yaml", "application/x-yaml":
		if stream {
			return o, false
		}
		o.Encoding = YAML
	case MediaCBOR:
		if !f.CBOR {
			return o, false
		}
		o.Encoding = CBOR
	case MediaCBORSeq:
		if !f.CBOR || !stream {
			return o, false
		}
		o.Encoding = CBOR
	case MediaProtobuf:
		// The kind itself needs protobuf methods; its partial views have
		// them whatever the kind (checked below).
		o.Encoding = Protobuf
	default:
		return o, false
	}
	if s, ok := c.params["stream"]; ok && s != "" && s != "watch" {
		return o, false
	}
	as, g, v := c.params["as"], c.params["g"], c.params["v"]
	if as == "" && g == "" && v == "" {
		return o, o.Encoding != Protobuf || f.Protobuf
	}
	if g != metav1.GroupName || (v != "v1" && v != "v1beta1") {
		return o, false
	}
	switch as {
	case "Table":
		if o.Encoding == Protobuf {
			return o, false // metav1.Table has no protobuf encoding
		}
		o.Target = AsTable
	case "PartialObjectMetadata":
		o.Target = AsPartial
	case "PartialObjectMetadataList":
		o.Target = AsPartialList
	default:
		return o, false
	}
	o.MetaVersion = v
	return o, true
}

// notAcceptableView is the 406 for a meta.k8s.io view that does not fit
// the response, such as PartialObjectMetadataList for a single object.
func notAcceptableView(msg string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusNotAcceptable,
		Reason:  metav1.StatusReasonNotAcceptable,
		Message: msg,
	}}
}

// UnsupportedMediaType is the 415 for a request body in a format the
// endpoint does not read; accepted is listed in the message.
func UnsupportedMediaType(accepted ...string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusUnsupportedMediaType,
		Reason:  metav1.StatusReasonUnsupportedMediaType,
		Message: "the body of the request was in an unknown format - accepted media types include: " + strings.Join(accepted, ", "),
	}}
}
