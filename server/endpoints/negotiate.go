package endpoints

import (
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/apiloom/apiloom/server/endpoints/request"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Media types this package reads and writes.
const (
	mediaJSON       = "application/json"
	mediaYAML       = "application/yaml"
	mediaJSONPatch  = "application/json-patch+json"
	mediaMergePatch = "application/merge-patch+json"
	mediaApplyPatch = "application/apply-patch+yaml"
	// mediaCBOR is one CBOR document; mediaCBORSeq a watch's events, one
	// CBOR document each (RFC 8742); mediaApplyCBOR a server-side apply
	// body in CBOR, which client-go sends when it prefers CBOR.
	mediaCBOR      = "application/cbor"
	mediaCBORSeq   = "application/cbor-seq"
	mediaApplyCBOR = "application/apply-patch+cbor"
)

// encoding is the syntax of a response.
type encoding int

const (
	encJSON encoding = iota
	encYAML
	encCBOR
	encProtobuf
)

// target is what a response carries: the objects themselves or one of the
// meta.k8s.io views of them that a client asked for with ;as=.
type target int

const (
	asObject      target = iota
	asTable              // metav1.Table (kubectl get)
	asPartial            // PartialObjectMetadata (metadata-only clients)
	asPartialList        // PartialObjectMetadataList
)

// output is the negotiated form of a response.
type output struct {
	enc    encoding
	target target
	// metaVersion is the meta.k8s.io version of a Table or partial view:
	// "v1" or "v1beta1".
	metaVersion string
	// table holds the Table view's options (?includeObject=).
	table metav1.TableOptions
	// gzip is true when a body larger than gzipThreshold is to be
	// compressed (handler.negotiate, compress.go).
	gzip bool
}

// answer is what a request is answered with, which limits the views.
type answer int

const (
	oneObject   answer = iota // get, create, update, patch, delete
	objectList                // list, deletecollection
	eventStream               // watch: one object per event
)

// contentType is the Content-Type of a response in this form.
// kube-apiserver does not repeat the ;as= parameters for resources.
func (o output) contentType() string {
	switch o.enc {
	case encYAML:
		return mediaYAML
	case encCBOR:
		return mediaCBOR
	case encProtobuf:
		return mediaProtobuf
	}
	return mediaJSON
}

// streamContentType is the Content-Type of a watch in this form: a CBOR
// watch is a sequence of documents, whether the client asked for
// application/cbor or application/cbor-seq, as kube-apiserver answers.
func (o output) streamContentType() string {
	switch o.enc {
	case encCBOR:
		return mediaCBORSeq
	case encProtobuf:
		return mediaProtobuf + ";stream=watch"
	}
	return mediaJSON
}

// metaAPIVersion is the apiVersion of a Table or partial view.
func (o output) metaAPIVersion() string { return metav1.GroupName + "/" + o.metaVersion }

// negotiate picks the response form from the Accept header and checks
// that the view fits the answer and its options are valid, so that a
// request fails before it changes anything (406 for a view that does not
// fit, 400 for bad Table options).
func negotiate(r *http.Request, a answer, f formats) (output, error) {
	out, err := negotiateMedia(r, a == eventStream, f)
	if err != nil {
		return out, err
	}
	switch {
	case out.target == asPartial && a == objectList:
		return out, notAcceptableView("you requested PartialObjectMetadata, but the requested object is a list")
	case out.target == asPartialList && a != objectList:
		return out, notAcceptableView("you requested PartialObjectMetadataList, but the requested object is not a list")
	case out.target == asTable:
		out.table, err = request.TableOptions(r.URL.Query())
	}
	return out, err
}

// negotiateMedia picks the response form from the Accept header. Clauses
// are tried from the highest q down, in header order among equals, and the
// first this server can produce wins. An empty header, */*,
// application/*, or any list that contains application/json gets JSON,
// even when protobuf comes first (client-go lists it first when it prefers
// it). stream is true for watches, which have no YAML form. CBOR and
// protobuf are served when f has them. Nothing acceptable is 406
// NotAcceptable.
func negotiateMedia(r *http.Request, stream bool, f formats) (output, error) {
	header := strings.Join(r.Header.Values("Accept"), ",")
	if strings.TrimSpace(header) == "" {
		return output{}, nil
	}
	for _, c := range parseAccept(header) {
		if o, ok := c.output(stream, f); ok {
			return o, nil
		}
	}
	accepted := []string{mediaJSON}
	if !stream {
		accepted = append(accepted, mediaYAML)
	}
	if f.protobuf {
		accepted = append(accepted, mediaProtobuf)
	}
	if f.cbor {
		accepted = append(accepted, mediaCBOR)
	}
	return output{}, &apierrors.StatusError{ErrStatus: metav1.Status{
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
func (c acceptClause) output(stream bool, f formats) (output, bool) {
	var o output
	switch c.mediaType {
	case "*/*", "application/*":
		return o, true
	case mediaJSON:
	case mediaYAML, "text/yaml", "application/x-yaml":
		if stream {
			return o, false
		}
		o.enc = encYAML
	case mediaCBOR:
		if !f.cbor {
			return o, false
		}
		o.enc = encCBOR
	case mediaCBORSeq:
		if !f.cbor || !stream {
			return o, false
		}
		o.enc = encCBOR
	case mediaProtobuf:
		// The kind itself needs protobuf methods; its partial views have
		// them whatever the kind (checked below).
		o.enc = encProtobuf
	default:
		return o, false
	}
	if s, ok := c.params["stream"]; ok && s != "" && s != "watch" {
		return o, false
	}
	as, g, v := c.params["as"], c.params["g"], c.params["v"]
	if as == "" && g == "" && v == "" {
		return o, o.enc != encProtobuf || f.protobuf
	}
	if g != metav1.GroupName || (v != "v1" && v != "v1beta1") {
		return o, false
	}
	switch as {
	case "Table":
		if o.enc == encProtobuf {
			return o, false // metav1.Table has no protobuf encoding
		}
		o.target = asTable
	case "PartialObjectMetadata":
		o.target = asPartial
	case "PartialObjectMetadataList":
		o.target = asPartialList
	default:
		return o, false
	}
	o.metaVersion = v
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

// unsupportedMediaType is the 415 for a request body in a format the
// endpoint does not read; accepted is listed in the message.
func unsupportedMediaType(accepted ...string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusUnsupportedMediaType,
		Reason:  metav1.StatusReasonUnsupportedMediaType,
		Message: "the body of the request was in an unknown format - accepted media types include: " + strings.Join(accepted, ", "),
	}}
}
