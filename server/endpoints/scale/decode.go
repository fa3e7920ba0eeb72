package scale

import (
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiloom/apiloom/server/wire"
)

// ErrBody is kube-apiserver's answer to a Scale body that does not
// decode (not JSON or YAML, a field of the wrong type, another kind, a
// strict-mode violation under fieldValidation=Strict): its Scale codec
// fails while describing the error, and this is what the client gets.
var ErrBody = apierrors.NewBadRequest(`no kind is registered for the type v1.Scale in scheme "pkg/runtime/scheme.go:111"`)

// kindError is what decoding a patched Scale that names another kind or
// version says upstream.
func kindError(gvk schema.GroupVersionKind) error {
	return fmt.Errorf("no kind %q is registered for version %q in scheme %q", gvk.Kind, gvk.GroupVersion().String(), "pkg/runtime/scheme.go:111")
}

// Decode decodes the JSON form of a PUT body into a Scale, with
// fieldValidation's rules for unknown and duplicate fields (warnings, or
// under Strict the 400 every undecodable body gets, ErrBody).
func Decode(data []byte, fieldValidation string) (*autoscalingv1.Scale, []string, error) {
	scale := &autoscalingv1.Scale{}
	strict, err := wire.Decoder{Strict: fieldValidation != metav1.FieldValidationIgnore}.Decode(data, scale)
	if err != nil || len(strict) > 0 && fieldValidation == metav1.FieldValidationStrict {
		return nil, nil, ErrBody
	}
	if gvk := scale.GroupVersionKind(); gvk.Kind != "" && gvk.Kind != GVK.Kind || !gvk.GroupVersion().Empty() && gvk.GroupVersion() != GVK.GroupVersion() {
		return nil, nil, ErrBody
	}
	var warnings []string
	for _, e := range strict {
		warnings = append(warnings, e.Error())
	}
	return scale, warnings, nil
}

// DecodePatched decodes a patched Scale, strictly when strict, which must
// name the Scale's kind and version. It returns the strict errors
// (unknown and duplicate fields) apart; err is what the patch's 422 says.
func DecodePatched(patched []byte, strict bool) (*autoscalingv1.Scale, []error, error) {
	scale := &autoscalingv1.Scale{}
	errs, err := wire.Decoder{Strict: strict}.Decode(patched, scale)
	if err != nil {
		return nil, nil, err
	}
	if gvk := scale.GroupVersionKind(); gvk != GVK {
		return nil, nil, kindError(gvk)
	}
	return scale, errs, nil
}
