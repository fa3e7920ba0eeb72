package responsewriters

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/endpoints/negotiation"
)

// ToStatus is the metav1.Status for any error: API errors as they are,
// a too-large body as 413, a finished context as 504 and the rest as 500.
func ToStatus(err error) metav1.Status {
	var st apierrors.APIStatus
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &st):
		s := st.Status()
		if s.Code == 0 {
			s.Code = http.StatusInternalServerError
		}
		if s.Status == "" {
			s.Status = metav1.StatusFailure
		}
		return s
	case errors.As(err, &tooLarge):
		return apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", tooLarge.Limit)).ErrStatus
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return apierrors.NewTimeoutError("request did not complete within the allotted timeout", 0).ErrStatus
	default:
		return apierrors.NewInternalError(err).ErrStatus
	}
}

// EncodeStatus returns s as JSON with its kind and apiVersion ("Status",
// "v1") set.
func EncodeStatus(s metav1.Status) []byte {
	s.Kind, s.APIVersion = "Status", "v1"
	data, err := json.Marshal(&s)
	if err != nil { // a Status always encodes; keep the client informed anyway
		return []byte(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"cannot encode status","reason":"InternalError","code":500}`)
	}
	return data
}

// EncodeStatusAs is EncodeStatus in the negotiated encoding: CBOR or
// protobuf when out asks for it, else JSON (converted to YAML by the
// writer).
func EncodeStatusAs(s metav1.Status, out negotiation.Output) []byte {
	if out.Encoding == negotiation.CBOR || out.Encoding == negotiation.Protobuf {
		s.Kind, s.APIVersion = "Status", "v1"
		if data, err := EncodeView(&s, out); err == nil {
			return data
		}
	}
	return EncodeStatus(s)
}
