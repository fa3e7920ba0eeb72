package endpoints

import (
	"fmt"
	"mime"
	"net/http"
	"net/url"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/apiloom/apiloom/server/endpoints/negotiation"
	"github.com/apiloom/apiloom/server/endpoints/request"
	"github.com/apiloom/apiloom/server/wire"
)

// readBody reads the request body, at most the resource's
// MaxRequestBodyBytes of it (request.ReadBody).
func (h *handler[O]) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	return request.ReadBody(w, r, h.limits.MaxRequestBodyBytes)
}

// formats are the syntaxes a resource reads and writes besides JSON and
// YAML, which every endpoint does.
type formats struct {
	// protobuf: the kind has protobuf methods, as k8s.io/api's do and
	// generated ones of apis/.
	protobuf bool
	// cbor: CBOR is served (Limits.CBOR).
	cbor bool
	// kind and newObject decode a protobuf body of the resource's kind;
	// bodies of other kinds (DeleteOptions) are decoded by client-go's
	// scheme.
	kind      schema.GroupVersionKind
	newObject func() runtime.Object
}

// bodyJSON returns the request body as JSON: JSON as it is, YAML converted,
// and protobuf and CBOR converted when formats has them. Other content
// types are 415, protobuf included for other kinds, as kube-apiserver
// answers it for custom resources. strict (fieldValidation=Strict) makes
// YAML duplicate keys an error, as kube-apiserver's strict YAML decoding
// does; duplicate CBOR map keys are always one, as there.
func bodyJSON(r *http.Request, body []byte, strict bool, f formats) ([]byte, error) {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return body, nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return nil, f.unsupported()
	}
	switch {
	case mt == mediaJSON:
		return body, nil
	case mt == mediaYAML:
		conv := yaml.YAMLToJSON
		if strict {
			conv = yaml.YAMLToJSONStrict
		}
		data, err := conv(body)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized: %v", err))
		}
		return data, nil
	case mt == mediaProtobuf && f.protobuf:
		return protobufToJSON(body, f.kind, f.newObject)
	case mt == mediaCBOR && f.cbor:
		data, err := wire.CBORToJSON(body)
		if err != nil {
			return nil, request.UnrecognizedBody(err)
		}
		return data, nil
	default:
		return nil, f.unsupported()
	}
}

// unsupported is the 415 for a body in none of the formats.
func (f formats) unsupported() error {
	accepted := []string{mediaJSON, mediaYAML}
	if f.protobuf {
		accepted = append(accepted, mediaProtobuf)
	}
	if f.cbor {
		accepted = append(accepted, mediaCBOR)
	}
	return negotiation.UnsupportedMediaType(accepted...)
}

// formats are the syntaxes this resource reads and writes.
func (h *handler[O]) formats() formats { return h.fmts }

// readWrite reads what a create or an update starts from, failing before
// anything is stored: the response form, the write options (parsed by
// parse) and the object in the body.
func (h *handler[O]) readWrite(w http.ResponseWriter, r *http.Request, parse func(url.Values) (request.WriteOptions, error)) (output, request.WriteOptions, decoded[O], error) {
	var in decoded[O]
	out, err := h.negotiate(r, oneObject)
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
	in, err = h.decodeObject(r, body, opts)
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
	data, err := bodyJSON(r, body, opts.FieldValidation == metav1.FieldValidationStrict, h.formats())
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
