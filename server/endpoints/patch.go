package endpoints

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"sync/atomic"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kjson "sigs.k8s.io/json"

	"github.com/apiloom/apiloom/server/endpoints/negotiation"
	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/wire"
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

func patchType(mt string) types.PatchType { return types.PatchType(mt) }

// readPatch reads what every PATCH starts with, in kube-apiserver's order:
// the body's media type (415 unless one of accepted), the answer's, the
// options, then the body. An apply body must be YAML or JSON (400
// otherwise), which kube-apiserver checks before anything else.
func (h *handler[O]) readPatch(w http.ResponseWriter, r *http.Request, accepted []string) (mt string, out output, opts writeOptions, body []byte, err error) {
	mt, _, err = mime.ParseMediaType(r.Header.Get("Content-Type"))
	if h.limits.CBOR && slices.Contains(accepted, mediaApplyPatch) {
		accepted = append(slices.Clip(accepted), mediaApplyCBOR)
	}
	if err != nil || !slices.Contains(accepted, mt) {
		return "", output{}, writeOptions{}, nil, negotiation.UnsupportedMediaType(accepted...)
	}
	cborApply := mt == mediaApplyCBOR
	if cborApply {
		// An apply in CBOR is the same apply in JSON (which is YAML).
		mt = mediaApplyPatch
	}
	if out, err = h.negotiate(r, oneObject); err != nil {
		return "", output{}, writeOptions{}, nil, err
	}
	if opts, err = parsePatchOptions(r.URL.Query(), mt); err != nil {
		return "", output{}, writeOptions{}, nil, err
	}
	if body, err = h.readBody(w, r); err != nil {
		return "", output{}, writeOptions{}, nil, err
	}
	if cborApply {
		if body, err = wire.CBORToJSON(body); err != nil {
			return "", output{}, writeOptions{}, nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
		}
	}
	if mt == mediaApplyPatch {
		// kube-apiserver converts the body to JSON (for its audit log)
		// first; a body that is neither YAML nor JSON fails there.
		if _, err := utilyaml.ToJSON(body); err != nil {
			return "", output{}, writeOptions{}, nil, apierrors.NewBadRequest(fmt.Sprintf("error encoding patch: %v", err))
		}
	}
	return mt, out, opts, body, nil
}

// patch serves PATCH of an object or its status: the patch is applied to
// the stored object and the result stored as an update, retried on the
// fresh object when the stored one changes meanwhile. A patch that sets
// metadata.resourceVersion makes that a precondition (409 on mismatch).
// The object must exist (404), but for a server-side apply (apply.go),
// which creates it.
func (h *handler[O]) patch(w http.ResponseWriter, r *http.Request, rt route) error {
	mt, out, opts, body, err := h.readPatch(w, r, resource.PatchTypes())
	if err != nil {
		return err
	}
	if mt == mediaApplyPatch {
		return h.apply(w, r, rt, out, opts, body)
	}
	p, err := parsePatch(mt, body, opts)
	if err != nil {
		return err
	}
	var warnings []string
	manager := managerName(opts.fieldManager, r.UserAgent())
	result, err := h.withoutManagedFieldsIfTooLarge(func(drop bool) (O, error) {
		return h.guaranteedUpdate(r.Context(), rt, opts.dryRun, func(current O) (O, error) {
			var zero O
			obj, f, ws, err := h.applyPatch(p, current, opts)
			if err != nil {
				return zero, err
			}
			warnings = ws // from the attempt that counts
			if err := h.checkName(obj, rt); err != nil {
				return zero, err
			}
			return h.prepareWrite(r.Context(), h.trackUpdate(obj, current, manager, rt, drop), current, f, rt)
		})
	})
	if err != nil {
		return err
	}
	return h.writeObject(w, out, http.StatusOK, result, warnings)
}

// parsedPatch is a validated patch, ready to apply to any object.
type parsedPatch struct {
	json      jsonpatch.Patch // for application/json-patch+json
	merge     []byte          // for application/merge-patch+json
	strategic []byte          // for application/strategic-merge-patch+json
	// strict are the strict errors of the patch document itself
	// (duplicate fields; unknown fields of JSON patch operations).
	strict []error
}

// jsonPatchOp is one JSON patch operation, for strict checking.
type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	From  string `json:"from"`
	Value any    `json:"value"`
}

// parsePatch checks a patch body once, before any attempt applies it: 400
// for one that does not parse, 413 for a JSON patch of too many operations.
func parsePatch(mt string, body []byte, opts writeOptions) (parsedPatch, error) {
	var p parsedPatch
	if !json.Valid(body) {
		return p, apierrors.NewBadRequest("invalid JSON patch")
	}
	var err error
	switch mt {
	case mediaJSONPatch:
		if opts.strict() {
			var ops []jsonPatchOp
			if p.strict, err = kjson.UnmarshalStrict(body, &ops); err != nil {
				return p, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
			}
			for i, e := range p.strict {
				p.strict[i] = fmt.Errorf("json patch %w", e)
			}
		}
		if p.json, err = jsonpatch.DecodePatch(body); err != nil {
			return p, apierrors.NewBadRequest(err.Error())
		}
		if len(p.json) > maxJSONPatchOperations {
			return p, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("The allowed maximum operations in a JSON patch is %d, got %d", maxJSONPatchOperations, len(p.json)))
		}
	case mediaStrategicMergePatch:
		p.strategic = body // decoded by each attempt, as kube-apiserver does
	default:
		if opts.strict() {
			var m map[string]any
			if p.strict, err = kjson.UnmarshalStrict(body, &m); err != nil {
				return p, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
			}
		}
		p.merge = body
	}
	return p, nil
}

// applyPatch applies p to current and decodes the result, returning it
// with its form (decodeForm), which the schema validates. Unknown or
// duplicate fields it produces follow fieldValidation: Strict makes them a
// 422 Invalid naming the patched object, as kube-apiserver does for
// patches; Warn returns them as warnings. A result that does not decode
// into the Go type is a 422 Invalid on the field "patch", as
// kube-apiserver answers for built-in types, unless the schema refuses it
// first.
func (h *handler[O]) applyPatch(p parsedPatch, current O, opts writeOptions) (O, *form, []string, error) {
	var zero O
	if p.strategic != nil {
		return h.strategicPatch(p.strategic, current, opts)
	}
	doc, err := wire.EncodeObject(current, h.gvk)
	if err != nil {
		return zero, nil, nil, err
	}
	var patched []byte
	if p.json != nil {
		if patched, err = p.json.Apply(doc); err != nil {
			return zero, nil, nil, apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
		}
	} else if patched, err = jsonpatch.MergePatch(doc, p.merge); err != nil {
		if errors.Is(err, jsonpatch.ErrBadJSONPatch) {
			return zero, nil, nil, apierrors.NewBadRequest(err.Error())
		}
		return zero, nil, nil, apierrors.NewBadRequest(fmt.Sprintf("error applying merge patch: %v", err))
	}

	obj := h.def.New()
	strict, err := wire.Decoder{Strict: opts.strict()}.Decode(patched, obj)
	if err != nil {
		err = patchInvalid(patched, err)
	}
	obj, f, err := h.decodeForm(h.jsonContent(patched), obj, err)
	if err != nil {
		return zero, nil, nil, err
	}
	strict = append(append([]error(nil), p.strict...), strict...)
	var warnings []string
	if len(strict) > 0 {
		if opts.fieldValidation == metav1.FieldValidationStrict {
			return zero, nil, nil, patchInvalid(patched, runtime.NewStrictDecodingError(strict))
		}
		for _, e := range strict {
			warnings = append(warnings, e.Error())
		}
	}
	if err := h.checkKind(obj.GetObjectKind().GroupVersionKind()); err != nil {
		return zero, nil, nil, err
	}
	return obj, f, warnings, nil
}

// jsonContent is data, a JSON object, as unstructured content, decoded as
// kube-apiserver decodes a custom resource (integers as int64); nil when
// the kind has no schema or data is not a JSON object.
func (h *handler[O]) jsonContent(data []byte) map[string]any {
	if !h.kind.HasSchema() {
		return nil
	}
	var u map[string]any
	if err := kjson.UnmarshalCaseSensitivePreserveInts(data, &u); err != nil {
		return nil
	}
	return u
}

// patchInvalid is kube-apiserver's 422 for a patched object that does not
// decode: an Invalid error on the field "patch".
func patchInvalid(patched []byte, err error) error {
	return apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{
		field.Invalid(field.NewPath("patch"), string(patched), err.Error()),
	})
}
