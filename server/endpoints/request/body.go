package request

import (
	"encoding/hex"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

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
