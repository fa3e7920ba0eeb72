package patch

import (
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"
)

// DecodeStrategic decodes the body of a strategic merge patch, which must
// be a JSON object (400 otherwise). strict (fieldValidation is not
// Ignore) returns its duplicate fields as strict errors. The merge
// mutates the map, so every attempt of a retried update decodes the patch
// anew.
func DecodeStrategic(body []byte, strict bool) (map[string]any, []error, error) {
	patchMap := map[string]any{}
	var strictErrs []error
	var err error
	if strict {
		if strictErrs, err = kjson.UnmarshalStrict(body, &patchMap); err != nil {
			return nil, nil, apierrors.NewBadRequest(err.Error())
		}
	} else if err := kjson.UnmarshalCaseSensitivePreserveInts(body, &patchMap); err != nil {
		return nil, nil, apierrors.NewBadRequest(err.Error())
	}
	return patchMap, strictErrs, nil
}

// MergeStrategic merges patch into original, an object's unstructured
// form, following meta (Meta). A merge whose work (cost.go) exceeds the
// square of maxListElements is 413 before any merging; 0 means no limit.
// The library mutates both maps.
func MergeStrategic(original, patch map[string]any, meta strategicpatch.LookupPatchMeta, maxListElements int) (map[string]any, error) {
	if n := maxListElements; n > 0 && smpWork(original, patch, meta, square(n)) > square(n) {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf(
			"The allowed maximum of list elements merged by a strategic merge patch is %d (the object's and the patch's together; several lists count by the squares of their lengths), and this patch merges more", n))
	}
	return strategicMerge(original, patch, meta)
}

// strategicMerge merges patch into original with strategicpatch, which
// panics on a merge key value it cannot compare (an object or a list in
// place of a name): kube-apiserver then resets the stream without an
// answer. The value came from the patch, so it is a 400 here.
func strategicMerge(original, patch map[string]any, meta strategicpatch.LookupPatchMeta) (merged map[string]any, err error) {
	defer func() {
		if r := recover(); r != nil {
			merged, err = nil, apierrors.NewBadRequest(fmt.Sprintf("invalid strategic merge patch: %v", r))
		}
	}()
	merged, err = strategicpatch.StrategicMergeMapPatchUsingLookupPatchMeta(original, patch, meta)
	if err != nil {
		return nil, strategicPatchError(err)
	}
	return merged, nil
}

// StrategicInvalid is kube-apiserver's 422 for a strategic merge patch
// whose result does not convert to the type: Invalid on the field "patch",
// whose value is the patch as Go prints the decoded map.
func StrategicInvalid(patchMap map[string]any, err error) error {
	return apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{
		field.Invalid(field.NewPath("patch"), fmt.Sprintf("%+v", patchMap), err.Error()),
	})
}

// strategicPatchError maps an error of strategicpatch to kube-apiserver's
// answer: 400 for a malformed directive, 422 for a patch the merge cannot
// express, and for everything else (an unknown $patch value, an element
// without its merge key, a list element of the wrong type, an unknown
// field named by a directive) a 500 with the library's message and no
// reason, which is what kube-apiserver answers: it passes those errors
// through as they are, and they become an unknown-reason Status. Matching
// that keeps clients that parse kube-apiserver's answers working; the
// request changed nothing either way.
func strategicPatchError(err error) error {
	switch {
	case errors.Is(err, mergepatch.ErrBadJSONDoc), errors.Is(err, mergepatch.ErrBadPatchFormatForPrimitiveList),
		errors.Is(err, mergepatch.ErrBadPatchFormatForRetainKeys), errors.Is(err, mergepatch.ErrBadPatchFormatForSetElementOrderList),
		errors.Is(err, mergepatch.ErrUnsupportedStrategicMergePatchFormat):
		return apierrors.NewBadRequest(err.Error())
	case errors.Is(err, mergepatch.ErrNoListOfLists), errors.Is(err, mergepatch.ErrPatchContentNotMatchRetainKeys):
		return apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusInternalServerError,
		Message: err.Error(),
	}}
}
