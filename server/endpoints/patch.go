package endpoints

import (
	"fmt"
	"mime"
	"net/http"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kjson "sigs.k8s.io/json"

	"github.com/apiloom/apiloom/server/endpoints/auditlog"
	"github.com/apiloom/apiloom/server/endpoints/fieldmanager"
	"github.com/apiloom/apiloom/server/endpoints/negotiation"
	"github.com/apiloom/apiloom/server/endpoints/patch"
	"github.com/apiloom/apiloom/server/endpoints/request"
	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/wire"
)

// WithSchemas gives the resource the server's OpenAPI definitions, which
// must hold the definition named by the resource's Info.OpenAPIName.
// Without them strategic merge patch follows the Go struct tags alone, as
// kube-apiserver does for its built-in types; +listType=map lists then
// have replace semantics.
func WithSchemas(s *patch.Schemas) Option { return func(c *handlerConfig) { c.schemas = s } }

// readPatch reads what every PATCH starts with, in kube-apiserver's order:
// the body's media type (415 unless one of accepted), the answer's, the
// options, then the body. An apply body must be YAML or JSON (400
// otherwise), which kube-apiserver checks before anything else.
func (h *handler[O]) readPatch(w http.ResponseWriter, r *http.Request, accepted []string) (mt string, out negotiation.Output, opts request.WriteOptions, body []byte, err error) {
	mt, _, err = mime.ParseMediaType(r.Header.Get("Content-Type"))
	if h.limits.CBOR && slices.Contains(accepted, negotiation.MediaApplyPatch) {
		accepted = append(slices.Clip(accepted), negotiation.MediaApplyCBOR)
	}
	if err != nil || !slices.Contains(accepted, mt) {
		return "", negotiation.Output{}, request.WriteOptions{}, nil, negotiation.UnsupportedMediaType(accepted...)
	}
	cborApply := mt == negotiation.MediaApplyCBOR
	if cborApply {
		// An apply in CBOR is the same apply in JSON (which is YAML).
		mt = negotiation.MediaApplyPatch
	}
	if out, err = h.negotiate(r, negotiation.OneObject); err != nil {
		return "", negotiation.Output{}, request.WriteOptions{}, nil, err
	}
	if opts, err = request.ParsePatchOptions(r.URL.Query(), mt); err != nil {
		return "", negotiation.Output{}, request.WriteOptions{}, nil, err
	}
	if body, err = h.readBody(w, r); err != nil {
		return "", negotiation.Output{}, request.WriteOptions{}, nil, err
	}
	if cborApply {
		if body, err = wire.CBORToJSON(body); err != nil {
			return "", negotiation.Output{}, request.WriteOptions{}, nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
		}
	}
	if mt == negotiation.MediaApplyPatch {
		// kube-apiserver converts the body to JSON (for its audit log)
		// first; a body that is neither YAML nor JSON fails there.
		js, err := utilyaml.ToJSON(body)
		if err != nil {
			return "", negotiation.Output{}, request.WriteOptions{}, nil, apierrors.NewBadRequest(fmt.Sprintf("error encoding patch: %v", err))
		}
		auditlog.RequestPatch(r.Context(), js)
	} else {
		auditlog.RequestPatch(r.Context(), body)
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
	if mt == negotiation.MediaApplyPatch {
		return h.apply(w, r, rt, out, opts, body)
	}
	p, err := patch.Parse(mt, body, opts.Strict())
	if err != nil {
		return err
	}
	var warnings []string
	manager := fieldmanager.ManagerName(opts.FieldManager, r.UserAgent())
	result, err := h.withoutManagedFieldsIfTooLarge(func(drop bool) (O, error) {
		return h.guaranteedUpdate(r.Context(), rt, opts.DryRun, func(current O) (O, error) {
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
	return h.writeObject(w, r, out, http.StatusOK, result, warnings)
}

// applyPatch applies p to current and decodes the result, returning it
// with its form (decodeForm), which the schema validates. Unknown or
// duplicate fields it produces follow fieldValidation: Strict makes them a
// 422 Invalid naming the patched object, as kube-apiserver does for
// patches; Warn returns them as warnings. A result that does not decode
// into the Go type is a 422 Invalid on the field "patch", as
// kube-apiserver answers for built-in types, unless the schema refuses it
// first.
func (h *handler[O]) applyPatch(p patch.Parsed, current O, opts request.WriteOptions) (O, *form, []string, error) {
	var zero O
	if p.Strategic != nil {
		return h.strategicPatch(p.Strategic, current, opts)
	}
	doc, err := wire.EncodeObject(current, h.gvk)
	if err != nil {
		return zero, nil, nil, err
	}
	patched, err := p.Apply(doc)
	if err != nil {
		return zero, nil, nil, err
	}

	obj := h.def.New()
	strict, err := wire.Decoder{Strict: opts.Strict()}.Decode(patched, obj)
	if err != nil {
		err = patch.Invalid(patched, err)
	}
	obj, f, err := h.decodeForm(h.jsonContent(patched), obj, err)
	if err != nil {
		return zero, nil, nil, err
	}
	strict = append(append([]error(nil), p.Strict...), strict...)
	var warnings []string
	if len(strict) > 0 {
		if opts.FieldValidation == metav1.FieldValidationStrict {
			return zero, nil, nil, patch.Invalid(patched, runtime.NewStrictDecodingError(strict))
		}
		for _, e := range strict {
			warnings = append(warnings, e.Error())
		}
	}
	if err := request.CheckKind(obj.GetObjectKind().GroupVersionKind(), h.gvk); err != nil {
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
