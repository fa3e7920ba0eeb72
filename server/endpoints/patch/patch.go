package patch

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"
)

// Media types of the patches Parse reads.
const (
	MediaJSONPatch  = "application/json-patch+json"
	MediaMergePatch = "application/merge-patch+json"
	// MediaStrategicMergePatch is a strategic merge patch: a JSON merge
	// patch whose lists merge by key where the type says so, plus the
	// $patch, $retainKeys, $deleteFromPrimitiveList and $setElementOrder
	// directives.
	MediaStrategicMergePatch = "application/strategic-merge-patch+json"
)

// maxJSONPatchOperations is kube-apiserver's cap on one JSON patch.
const maxJSONPatchOperations = 10000

// DefaultJSONPatchMaxCopyBytes is kube-apiserver's JSONPatchMaxCopyBytes:
// how much a JSON patch's copy operations may add to the document. A few
// hundred bytes of copies of a list into itself otherwise double it each
// time, to gigabytes.
const DefaultJSONPatchMaxCopyBytes = 3 << 20

func init() { SetJSONPatchMaxCopyBytes(DefaultJSONPatchMaxCopyBytes) }

// SetJSONPatchMaxCopyBytes sets how many bytes the copy operations of one
// JSON patch may add before the patch is refused (422); n <= 0 keeps the
// current limit. The limit lives in the JSON patch library and is shared
// by the whole process, as in kube-apiserver; the server sets it once, at
// start.
func SetJSONPatchMaxCopyBytes(n int64) {
	if n > 0 && atomic.LoadInt64(&jsonpatch.AccumulatedCopySizeLimit) != n {
		atomic.StoreInt64(&jsonpatch.AccumulatedCopySizeLimit, n)
	}
}

// Parsed is a validated patch, ready to apply to any object. One of JSON,
// Merge and Strategic is set, by the patch's type.
type Parsed struct {
	JSON      jsonpatch.Patch // for application/json-patch+json
	Merge     []byte          // for application/merge-patch+json
	Strategic []byte          // for application/strategic-merge-patch+json
	// Strict are the strict errors of the patch document itself
	// (duplicate fields; unknown fields of JSON patch operations).
	Strict []error
}

// jsonPatchOp is one JSON patch operation, for strict checking.
type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	From  string `json:"from"`
	Value any    `json:"value"`
}

// Parse checks a patch body of media type mt once, before any attempt
// applies it: 400 for one that does not parse, 413 for a JSON patch of too
// many operations. strict (fieldValidation is not Ignore) collects the
// patch document's own strict errors.
func Parse(mt string, body []byte, strict bool) (Parsed, error) {
	var p Parsed
	if !json.Valid(body) {
		return p, apierrors.NewBadRequest("invalid JSON patch")
	}
	var err error
	switch mt {
	case MediaJSONPatch:
		if strict {
			var ops []jsonPatchOp
			if p.Strict, err = kjson.UnmarshalStrict(body, &ops); err != nil {
				return p, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
			}
			for i, e := range p.Strict {
				p.Strict[i] = fmt.Errorf("json patch %w", e)
			}
		}
		if p.JSON, err = jsonpatch.DecodePatch(body); err != nil {
			return p, apierrors.NewBadRequest(err.Error())
		}
		if len(p.JSON) > maxJSONPatchOperations {
			return p, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("The allowed maximum operations in a JSON patch is %d, got %d", maxJSONPatchOperations, len(p.JSON)))
		}
	case MediaStrategicMergePatch:
		p.Strategic = body // decoded by each attempt, as kube-apiserver does
	default:
		if strict {
			var m map[string]any
			if p.Strict, err = kjson.UnmarshalStrict(body, &m); err != nil {
				return p, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
			}
		}
		p.Merge = body
	}
	return p, nil
}

// Apply applies a JSON or merge patch to doc, an object's JSON: 422 for a
// JSON patch that fails (a test, a path, the copy bound), 400 for a merge
// patch that does. A strategic merge patch needs the object's type
// (MergeStrategic).
func (p Parsed) Apply(doc []byte) ([]byte, error) {
	if p.JSON != nil {
		patched, err := p.JSON.Apply(doc)
		if err != nil {
			return nil, apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
		}
		return patched, nil
	}
	patched, err := jsonpatch.MergePatch(doc, p.Merge)
	if err != nil {
		if errors.Is(err, jsonpatch.ErrBadJSONPatch) {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		return nil, apierrors.NewBadRequest(fmt.Sprintf("error applying merge patch: %v", err))
	}
	return patched, nil
}

// Invalid is kube-apiserver's 422 for a patched object that does not
// decode: an Invalid error on the field "patch".
func Invalid(patched []byte, err error) error {
	return apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{
		field.Invalid(field.NewPath("patch"), string(patched), err.Error()),
	})
}
