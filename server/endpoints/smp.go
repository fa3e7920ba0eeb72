package endpoints

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apiloom/apiloom/server/endpoints/patch"
	"github.com/apiloom/apiloom/server/endpoints/request"
)

// strategicPatch applies a strategic merge patch to current, as
// kube-apiserver applies one to an object of a built-in type, step by step:
// the patch is decoded here, once the object is known to exist (a patch
// that is not a JSON object is 400 only then, after a 404), merged into
// current's unstructured form by k8s.io/apimachinery's strategicpatch
// following h.patchMeta (patch.MergeStrategic), and the result converted
// to the Go type, which reports unknown fields (and with the patch's
// duplicate fields, follows fieldValidation) and wrong types (422 Invalid
// on the field "patch", unless the schema refuses the result first). The
// merged content is also the result's form (decodeForm), which the schema
// validates.
// apiVersion and kind in the patch are not checked: as upstream, they are
// lost on the way to the typed object (here, storage and responses set
// the resource's own). The library mutates both maps, so every attempt of
// a retried update decodes the patch anew.
func (h *handler[O]) strategicPatch(body []byte, current O, opts request.WriteOptions) (O, *form, []string, error) {
	var zero O
	original, err := runtime.DefaultUnstructuredConverter.ToUnstructured(current)
	if err != nil {
		return zero, nil, nil, err
	}
	original["apiVersion"], original["kind"] = h.gvk.ToAPIVersionAndKind()

	patchMap, strict, err := patch.DecodeStrategic(body, opts.Strict())
	if err != nil {
		return zero, nil, nil, err
	}
	patched, err := patch.MergeStrategic(original, patchMap, h.patchMeta, h.limits.StrategicMergePatchMaxListElements)
	if err != nil {
		return zero, nil, nil, err
	}

	obj := h.def.New()
	var typedErr error
	err = runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(patched, obj, opts.Strict())
	if err != nil {
		serr, ok := runtime.AsStrictDecodingError(err)
		if !ok {
			// A conversion error trumps the strict ones, which may be
			// incomplete.
			typedErr = patch.StrategicInvalid(patchMap, err)
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
		if opts.FieldValidation == metav1.FieldValidationStrict {
			return zero, nil, nil, patch.StrategicInvalid(patchMap, runtime.NewStrictDecodingError(strict))
		}
		for _, e := range strict {
			warnings = append(warnings, e.Error())
		}
	}
	return obj, f, warnings, nil
}
