package endpoints

import (
	"net/http"
	"net/url"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apiloom/apiloom/server/endpoints/negotiation"
	"github.com/apiloom/apiloom/server/endpoints/request"
	"github.com/apiloom/apiloom/server/wire"
)

// readBody reads the request body, at most the resource's
// MaxRequestBodyBytes of it (request.ReadBody).
func (h *handler[O]) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	return request.ReadBody(w, r, h.limits.MaxRequestBodyBytes)
}

// formats are the syntaxes this resource reads and writes.
func (h *handler[O]) formats() request.Formats { return h.fmts }

// readWrite reads what a create or an update starts from, failing before
// anything is stored: the response form, the write options (parsed by
// parse) and the object in the body.
func (h *handler[O]) readWrite(w http.ResponseWriter, r *http.Request, parse func(url.Values) (request.WriteOptions, error)) (negotiation.Output, request.WriteOptions, decoded[O], error) {
	var in decoded[O]
	out, err := h.negotiate(r, negotiation.OneObject)
	if err != nil {
		return out, request.WriteOptions{}, in, err
	}
	opts, err := parse(r.URL.Query())
	if err != nil {
		return out, opts, in, err
	}
	body, err := h.readBody(w, r)
	if err != nil {
		return out, opts, in, err
	}
	if in, err = h.decodeObject(r, body, opts); err == nil {
		h.auditRequest(r.Context(), in.obj)
	}
	return out, opts, in, err
}

// decoded is a request object, its form (nil without a schema) and the
// warnings its decoding produced.
type decoded[O runtime.Object] struct {
	obj      O
	form     *form
	warnings []string
}

// decodeObject decodes a create or update body into a new object of the
// resource, applying fieldValidation: Strict rejects unknown and duplicate
// fields (400, "strict decoding error: unknown field ..."), Warn turns them
// into warnings, Ignore drops them. The body's kind and apiVersion, when
// present, must be the resource's (400 otherwise). With a schema, the body
// is also decoded into its form (decodeForm), and a JSON object that does
// not decode into the Go type is answered only once the schema had its
// say (prepareCreate, prepareUpdate).
func (h *handler[O]) decodeObject(r *http.Request, body []byte, opts request.WriteOptions) (decoded[O], error) {
	var out decoded[O]
	data, err := request.BodyJSON(r, body, opts.FieldValidation == metav1.FieldValidationStrict, h.formats())
	if err != nil {
		return out, err
	}
	obj := h.def.New()
	strictErrs, err := wire.Decoder{Strict: opts.Strict()}.Decode(data, obj)
	if err != nil {
		err = request.DecodeError(h.gvk, data, err)
	}
	if obj, out.form, err = h.decodeForm(h.jsonContent(data), obj, err); err != nil {
		return out, err
	}
	if len(strictErrs) > 0 {
		if opts.FieldValidation == metav1.FieldValidationStrict {
			return out, request.DecodeError(h.gvk, data, runtime.NewStrictDecodingError(strictErrs))
		}
		for _, e := range strictErrs {
			out.warnings = append(out.warnings, e.Error())
		}
	}
	if err := request.CheckKind(obj.GetObjectKind().GroupVersionKind(), h.gvk); err != nil {
		return out, err
	}
	out.obj = obj
	return out, nil
}

// UnrecognizedObject is kube-apiserver's 400 for a body of no known kind
// that does not decode as a kind (request.UnrecognizedObject).
func UnrecognizedObject(kind string, data []byte, err error) error {
	return request.UnrecognizedObject(kind, data, err)
}
