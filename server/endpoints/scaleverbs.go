package endpoints

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/apiloom/apiloom/server/endpoints/auditlog"
	"github.com/apiloom/apiloom/server/endpoints/fieldmanager"
	"github.com/apiloom/apiloom/server/endpoints/negotiation"
	"github.com/apiloom/apiloom/server/endpoints/patch"
	"github.com/apiloom/apiloom/server/endpoints/request"
	"github.com/apiloom/apiloom/server/endpoints/responsewriters"
	"github.com/apiloom/apiloom/server/endpoints/scale"
	"github.com/apiloom/apiloom/server/endpoints/storageerr"
	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
)

// The scale subresource's model (its paths, the Scale of an object, its
// field manager) is package scale's; its verbs, which read and write the
// object with this package's rules, are here.

// scaledObject is the object to store when sc, with its managed fields
// already tracked, is written over current (scale.Subresource.Scaled),
// prepared as any update of the object.
func (h *handler[O]) scaledObject(ctx context.Context, sc *autoscalingv1.Scale, current O, content map[string]any, sh *managedfields.ScaleHandler, rt route) (O, error) {
	var zero O
	obj := h.def.New()
	if err := h.scale.Scaled(obj, sc, content, sh); err != nil {
		return zero, err
	}
	if err := h.prepareUpdate(ctx, obj, current, nil, rt.namespace); err != nil {
		return zero, err
	}
	return obj, nil
}

// getScale serves GET of .../{name}/scale: the object's Scale. An object
// without a spec replicas field has none: 500, as upstream.
func (h *handler[O]) getScale(w http.ResponseWriter, r *http.Request, rt route) error {
	out, err := h.negotiate(r, negotiation.OneObject)
	if err != nil {
		return err
	}
	obj, err := h.store.Get(r.Context(), h.key(rt), storage.GetOptions{ResourceVersion: r.URL.Query().Get("resourceVersion")})
	if err != nil {
		return storageerr.Status(err, h.gr, rt.name, storageerr.Other)
	}
	sc, found, err := h.scale.Stored(obj)
	if err != nil {
		return err
	}
	if !found {
		return apierrors.NewInternalError(fmt.Errorf("the spec replicas field %q does not exist", h.scale.SpecReplicasPath()))
	}
	return h.writeScale(w, r, out, sc, nil)
}

// updateScale serves PUT of .../{name}/scale: the body, a Scale, sets the
// object's spec replicas. Without a resourceVersion it applies to whatever
// the object is; with one, that must be the object's (409 otherwise). It
// never creates (404).
func (h *handler[O]) updateScale(w http.ResponseWriter, r *http.Request, rt route) error {
	out, err := h.negotiate(r, negotiation.OneObject)
	if err != nil {
		return err
	}
	opts, err := request.ParseUpdateOptions(r.URL.Query())
	if err != nil {
		return err
	}
	body, err := h.readBody(w, r)
	if err != nil {
		return err
	}
	in, warnings, err := decodeScale(r, body, opts)
	if err != nil {
		return err
	}
	auditlog.RequestObject(r.Context(), in, h.gr.WithVersion(h.gvk.Version), "", encodeView)
	if err := h.checkName(in, rt); err != nil {
		return err
	}
	manager := fieldmanager.ManagerName(opts.FieldManager, r.UserAgent())
	result, err := h.guaranteedUpdate(r.Context(), rt, opts.DryRun, func(current O) (O, error) {
		var zero O
		old, content, sh, err := h.scale.Current(current)
		if err != nil {
			return zero, err
		}
		sc := h.scale.Track(old, in.DeepCopy(), manager)
		return h.scaledObject(r.Context(), sc, current, content, sh, rt)
	})
	if err != nil {
		return err
	}
	return h.writeStoredScale(w, r, out, result, warnings)
}

// decodeScale decodes a PUT body into a Scale, with fieldValidation's
// rules for unknown and duplicate fields (warnings, or under Strict the
// 400 every undecodable body gets, scale.ErrBody; scale.Decode).
func decodeScale(r *http.Request, body []byte, opts request.WriteOptions) (*autoscalingv1.Scale, []string, error) {
	data, err := request.BodyJSON(r, body, opts.FieldValidation == metav1.FieldValidationStrict, request.Formats{})
	if err != nil {
		if apierrors.IsUnsupportedMediaType(err) {
			return nil, nil, err
		}
		return nil, nil, scale.ErrBody
	}
	return scale.Decode(data, opts.FieldValidation)
}

// patchScale serves PATCH of .../{name}/scale: a JSON or merge patch of
// the object's Scale, or a server-side apply of one, which sets the
// object's spec replicas as updateScale does. A resourceVersion the patch
// sets is the precondition. It never creates (404), not even an apply.
func (h *handler[O]) patchScale(w http.ResponseWriter, r *http.Request, rt route) error {
	mt, out, opts, body, err := h.readPatch(w, r, resource.ScalePatchTypes())
	if err != nil {
		return err
	}
	var p patch.Parsed
	if mt != negotiation.MediaApplyPatch {
		if p, err = patch.Parse(mt, body, opts.Strict()); err != nil {
			return err
		}
	}
	manager := fieldmanager.ManagerName(opts.FieldManager, r.UserAgent())
	var warnings []string
	result, err := h.guaranteedUpdate(r.Context(), rt, opts.DryRun, func(current O) (O, error) {
		var zero O
		old, content, sh, err := h.scale.Current(current)
		if err != nil {
			return zero, err
		}
		var sc *autoscalingv1.Scale
		if mt == negotiation.MediaApplyPatch {
			sc, warnings, err = h.applyScale(old, body, opts)
		} else if sc, warnings, err = patchScaleObject(p, old, opts); err == nil {
			sc = h.scale.Track(old, sc, manager)
		}
		if err == nil {
			err = h.checkName(sc, rt)
		}
		if err != nil {
			return zero, err
		}
		return h.scaledObject(r.Context(), sc, current, content, sh, rt)
	})
	if err != nil {
		responsewriters.WriteWarnings(w, warnings)
		return err
	}
	return h.writeStoredScale(w, r, out, result, warnings)
}

// patchScaleObject applies a JSON or merge patch to old and decodes the
// result, with the 422 and the strict-field rules of any patch (applyPatch).
func patchScaleObject(p patch.Parsed, old *autoscalingv1.Scale, opts request.WriteOptions) (*autoscalingv1.Scale, []string, error) {
	doc, err := json.Marshal(old)
	if err != nil {
		return nil, nil, err
	}
	var patched []byte
	if p.JSON != nil {
		if patched, err = p.JSON.Apply(doc); err != nil {
			return nil, nil, apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
		}
	} else if patched, err = jsonpatch.MergePatch(doc, p.Merge); err != nil {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("error applying merge patch: %v", err))
	}
	sc, strict, err := scale.DecodePatched(patched, opts.Strict())
	if err != nil {
		return nil, nil, patch.Invalid(patched, err)
	}
	strict = append(append([]error(nil), p.Strict...), strict...)
	var warnings []string
	if len(strict) > 0 {
		if opts.FieldValidation == metav1.FieldValidationStrict {
			return nil, nil, patch.Invalid(patched, runtime.NewStrictDecodingError(strict))
		}
		for _, e := range strict {
			warnings = append(warnings, e.Error())
		}
	}
	return sc, warnings, nil
}

// applyScale merges an applied Scale configuration into old with the
// scale field manager, as an apply to the object merges (apply.go).
func (h *handler[O]) applyScale(old *autoscalingv1.Scale, body []byte, opts request.WriteOptions) (*autoscalingv1.Scale, []string, error) {
	patch := &unstructured.Unstructured{Object: map[string]any{}}
	if err := utilyaml.Unmarshal(body, &patch.Object); err != nil {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
	}
	merged, err := h.scale.Apply(old, patch, opts.FieldManager, opts.Force)
	if err != nil {
		return nil, nil, applyError(err)
	}
	var warnings []string
	if opts.FieldValidation != metav1.FieldValidationIgnore {
		if err := utilyaml.UnmarshalStrict(body, &map[string]any{}); err != nil {
			if opts.FieldValidation == metav1.FieldValidationStrict {
				return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("error strict decoding patch: %v", err))
			}
			warnings = yamlWarnings(err.Error())
		}
	}
	sc, ok := merged.(*autoscalingv1.Scale)
	if !ok {
		return nil, nil, fmt.Errorf("%w: apply produced %T", fieldmanager.ErrNotConvertible, merged)
	}
	return sc, warnings, nil
}

// writeStoredScale answers a write with the Scale of the object it stored.
func (h *handler[O]) writeStoredScale(w http.ResponseWriter, r *http.Request, out negotiation.Output, obj O, warnings []string) error {
	sc, _, err := h.scale.Stored(obj)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	return h.writeScale(w, r, out, sc, warnings)
}

// writeScale answers with sc in the negotiated form: the Scale, a
// one-row Table of its replicas, as kube-apiserver's scale Table has
// them, or its PartialObjectMetadata.
func (h *handler[O]) writeScale(w http.ResponseWriter, r *http.Request, out negotiation.Output, sc *autoscalingv1.Scale, warnings []string) error {
	var data []byte
	var err error
	switch out.Target {
	case negotiation.AsObject:
		data, err = responsewriters.EncodeView(sc, out)
		h.auditResponse(r.Context(), sc, true)
	case negotiation.AsTable:
		var t *metav1.Table
		if t, err = scale.Table(sc, out, h.now()); err == nil {
			data, err = responsewriters.EncodeView(t, out)
			h.auditResponse(r.Context(), t, true)
		}
	default:
		p := out.PartialObject(sc)
		data, err = responsewriters.EncodeView(p, out)
		h.auditResponse(r.Context(), p, true)
	}
	if err != nil {
		return err
	}
	return responsewriters.WriteEncoded(w, out, http.StatusOK, data, warnings)
}
