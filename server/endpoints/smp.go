package endpoints

import (
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"
)

// mediaStrategicMergePatch is a strategic merge patch: a JSON merge patch
// whose lists merge by key where the type says so, plus the $patch,
// $retainKeys, $deleteFromPrimitiveList and $setElementOrder directives.
const mediaStrategicMergePatch = "application/strategic-merge-patch+json"

// strategicPatch applies a strategic merge patch to current, as
// kube-apiserver applies one to an object of a built-in type, step by step:
// the patch is decoded here, once the object is known to exist (a patch
// that is not a JSON object is 400 only then, after a 404), merged into
// current's unstructured form by k8s.io/apimachinery's strategicpatch
// following h.patchMeta, and the result converted to the Go type, which
// reports unknown fields (and with the patch's duplicate fields, follows
// fieldValidation) and wrong types (422 Invalid on the field "patch",
// unless the schema refuses the result first). The merged content is also
// the result's form (decodeForm), which the schema validates.
// apiVersion and kind in the patch are not checked: as upstream, they are
// lost on the way to the typed object (here, storage and responses set
// the resource's own). The library mutates both maps, so every attempt of
// a retried update decodes the patch anew.
func (h *handler[O]) strategicPatch(patch []byte, current O, opts writeOptions) (O, *form, []string, error) {
	var zero O
	original, err := runtime.DefaultUnstructuredConverter.ToUnstructured(current)
	if err != nil {
		return zero, nil, nil, err
	}
	original["apiVersion"], original["kind"] = h.gvk.ToAPIVersionAndKind()

	patchMap := map[string]any{}
	var strict []error
	if opts.strict() {
		if strict, err = kjson.UnmarshalStrict(patch, &patchMap); err != nil {
			return zero, nil, nil, apierrors.NewBadRequest(err.Error())
		}
	} else if err := kjson.UnmarshalCaseSensitivePreserveInts(patch, &patchMap); err != nil {
		return zero, nil, nil, apierrors.NewBadRequest(err.Error())
	}

	if n := h.limits.StrategicMergePatchMaxListElements; n > 0 && smpWork(original, patchMap, h.patchMeta, square(n)) > square(n) {
		return zero, nil, nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf(
			"The allowed maximum of list elements merged by a strategic merge patch is %d (the object's and the patch's together; several lists count by the squares of their lengths), and this patch merges more", n))
	}
	patched, err := strategicMerge(original, patchMap, h.patchMeta)
	if err != nil {
		return zero, nil, nil, err
	}

	obj := h.def.New()
	var typedErr error
	err = runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(patched, obj, opts.strict())
	if err != nil {
		serr, ok := runtime.AsStrictDecodingError(err)
		if !ok {
			// A conversion error trumps the strict ones, which may be
			// incomplete.
			typedErr = strategicPatchInvalid(patchMap, err)
		} else {
			strict = append(strict, serr.Errors()...)
		}
	}
	// The merged content is the patch's result as a CRD would see it.
	obj, f, err := h.decodeForm(patched, obj, typedErr)
	if err != nil {
		return zero, nil, nil, err
	}
	var warnings []string
	if len(strict) > 0 {
		if opts.fieldValidation == metav1.FieldValidationStrict {
			return zero, nil, nil, strategicPatchInvalid(patchMap, runtime.NewStrictDecodingError(strict))
		}
		for _, e := range strict {
			warnings = append(warnings, e.Error())
		}
	}
	return obj, f, warnings, nil
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

// strategicPatchInvalid is kube-apiserver's 422 for a strategic merge patch
// whose result does not convert to the type: Invalid on the field "patch",
// whose value is the patch as Go prints the decoded map.
func strategicPatchInvalid(patchMap map[string]any, err error) error {
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
