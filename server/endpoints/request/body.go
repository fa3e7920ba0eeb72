package request

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"

	jsoniter "github.com/json-iterator/go"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ReadBody reads the request body, at most limit bytes of it (the
// resource's Limits.MaxRequestBodyBytes; <= 0 for no limit). A larger body
// is a *http.MaxBytesError, which server/endpoints' toStatus turns into
// 413.
func ReadBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = math.MaxInt64
	}
	if r.ContentLength > limit {
		return nil, &http.MaxBytesError{Limit: limit}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, err
		}
		return nil, apierrors.NewBadRequest("cannot read request body: " + err.Error())
	}
	return body, nil
}

// CheckKind rejects a body that names another kind or group/version than
// want, the resource's. Missing parts default to the resource's, as
// upstream.
func CheckKind(gvk, want schema.GroupVersionKind) error {
	if gvk.Kind != "" && gvk.Kind != want.Kind {
		version := gvk.Version
		if version == "" {
			version = want.Version
		}
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: the kind in the data (%s) does not match the expected kind (%s)",
			gvk.Kind, version, want.Kind, gvk.Kind, want.Kind))
	}
	if gv := gvk.GroupVersion(); !gv.Empty() && gv != want.GroupVersion() {
		return apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", gv, want.GroupVersion()))
	}
	return nil
}

// DecodeError is the 400 for a body that does not decode into the kind
// want, worded as kube-apiserver words it: naming the kind the body
// claims, or quoting the start of the body when it claims none.
func DecodeError(want schema.GroupVersionKind, data []byte, err error) error {
	var tm metav1.TypeMeta
	_ = jsoniter.ConfigCompatibleWithStandardLibrary.Unmarshal(data, &tm) // best effort
	if tm.Kind != "" {
		version := schema.FromAPIVersionAndKind(tm.APIVersion, tm.Kind).Version
		if version == "" {
			version = want.Version
		}
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", tm.Kind, version, want.Kind, err))
	}
	return UnrecognizedObject(want.Kind, data, err)
}

// UnrecognizedBody is the 400 for a CBOR or protobuf body that does not
// decode.
func UnrecognizedBody(err error) error {
	return apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized: %v", err))
}

// UnrecognizedObject is kube-apiserver's 400 for a body of no known kind
// that does not decode as a kind: it quotes the body's start.
func UnrecognizedObject(kind string, data []byte, err error) error {
	return apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %v (%s)", kind, err, summarize(data, 30)))
}

// summarize quotes the start of data for an error message: as text when it
// looks like a JSON object, in hex otherwise.
func summarize(data []byte, n int) string {
	switch {
	case len(data) == 0:
		return "<empty>"
	case data[0] == '{':
		if len(data) > n {
			return string(data[:n]) + " ..."
		}
		return string(data)
	default:
		if len(data) > n {
			return hex.EncodeToString(data[:n]) + " ..."
		}
		return hex.EncodeToString(data)
	}
}
