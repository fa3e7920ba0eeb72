package request

import (
	"fmt"
	"mime"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/apiloom/apiloom/server/endpoints/negotiation"
	"github.com/apiloom/apiloom/server/wire"
)

// Formats are the syntaxes a resource reads and writes besides JSON and
// YAML, which every endpoint does.
type Formats struct {
	// Protobuf: the kind has protobuf methods, as k8s.io/api's do and
	// generated ones of apis/.
	Protobuf bool
	// CBOR: CBOR is served (Limits.CBOR).
	CBOR bool
	// Kind and NewObject decode a protobuf body of the resource's kind;
	// bodies of other kinds (DeleteOptions) are decoded by client-go's
	// scheme.
	Kind      schema.GroupVersionKind
	NewObject func() runtime.Object
}

// BodyJSON returns the request body as JSON: JSON as it is, YAML converted,
// and protobuf and CBOR converted when f has them. Other content
// types are 415, protobuf included for other kinds, as kube-apiserver
// answers it for custom resources. strict (fieldValidation=Strict) makes
// YAML duplicate keys an error, as kube-apiserver's strict YAML decoding
// does; duplicate CBOR map keys are always one, as there.
func BodyJSON(r *http.Request, body []byte, strict bool, f Formats) ([]byte, error) {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return body, nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return nil, f.Unsupported()
	}
	switch {
	case mt == negotiation.MediaJSON:
		return body, nil
	case mt == negotiation.MediaYAML:
		conv := yaml.YAMLToJSON
		if strict {
			conv = yaml.YAMLToJSONStrict
		}
		data, err := conv(body)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized: %v", err))
		}
		return data, nil
	case mt == negotiation.MediaProtobuf && f.Protobuf:
		return protobufToJSON(body, f.Kind, f.NewObject)
	case mt == negotiation.MediaCBOR && f.CBOR:
		data, err := wire.CBORToJSON(body)
		if err != nil {
			return nil, UnrecognizedBody(err)
		}
		return data, nil
	default:
		return nil, f.Unsupported()
	}
}

// unsupported is the 415 for a body in none of the formats.
func (f Formats) Unsupported() error {
	accepted := []string{negotiation.MediaJSON, negotiation.MediaYAML}
	if f.Protobuf {
		accepted = append(accepted, negotiation.MediaProtobuf)
	}
	if f.CBOR {
		accepted = append(accepted, negotiation.MediaCBOR)
	}
	return negotiation.UnsupportedMediaType(accepted...)
}
