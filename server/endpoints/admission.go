package endpoints

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apiloom/apiloom/server/admission/schemacheck"
	"github.com/apiloom/apiloom/server/resource"
)

// Every write reaches the kind's schema (resource.Info.Schema) through the
// functions below, in the order kube-apiserver admits a custom resource:
// decode, defaults, mutate (patch merge, apply, managed fields), validate,
// storage. A kind without a schema is only checked by the metadata rules
// (meta.go).
//
// Typed objects are converted to unstructured content, the form the
// schema's defaulting and validators read, by
// runtime.DefaultUnstructuredConverter: once per validated object (and
// once for the old object of an update), plus, when the schema has
// defaults, a conversion back to the typed object after defaulting.
//
// Unknown fields are not pruned as a CRD prunes them: the schema describes
// the Go type, and decoding into the Go type has already dropped every
// field the type lacks (reported by fieldValidation as for a CRD).

// schemaChecker returns the schema check of def: the one an option gave,
// or one built from def.Schema. It panics when the schema is invalid, a
// programming error that the registry reports as an error at start
// (registry.Build builds every check first).
func schemaChecker[O resource.Object](def *resource.Definition[O], given *schemacheck.Check) *schemacheck.Check {
	if given != nil || def.Schema == "" {
		return given
	}
	c, err := schemacheck.New(context.Background(), &def.Info)
	if err != nil {
		panic(fmt.Sprintf("endpoints: resource %s: %v", def.GroupResource(), err))
	}
	return c
}

// toUnstructured is obj's unstructured content, with its apiVersion and
// kind set (a decoded typed object may lack them).
func (h *handler[O]) toUnstructured(obj O) (map[string]any, error) {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("converting %s to unstructured: %w", h.gvk.Kind, err))
	}
	u["apiVersion"], u["kind"] = h.gvk.GroupVersion().String(), h.gvk.Kind
	return u, nil
}

// defaulted applies the schema's defaults to obj, as kube-apiserver
// defaults a custom resource it decodes, and returns obj's unstructured
// content for validation (nil when the kind has no schema). Defaults fill
// fields absent from obj's JSON: a typed field with omitempty and a zero
// value is absent, as in the JSON the server stores.
func (h *handler[O]) defaulted(obj O) (map[string]any, error) {
	if h.check == nil {
		return nil, nil
	}
	u, err := h.toUnstructured(obj)
	if err != nil || !h.check.HasDefaults() {
		return u, err
	}
	h.check.Default(u)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, obj); err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("converting defaulted %s: %w", h.gvk.Kind, err))
	}
	return u, nil
}

// applyDefaults applies the schema's defaults to obj, where nothing
// validates it yet: a decoded body before the field manager records it,
// so a defaulted field counts as set by its writer, as in kube-apiserver.
// A conversion error leaves obj as it is; defaulted reports it later.
func (h *handler[O]) applyDefaults(obj O) {
	if h.check != nil && h.check.HasDefaults() {
		_, _ = h.defaulted(obj)
	}
}

// validateCreate is errs (the metadata violations) followed by the
// schema's and the scale subresource's violations of obj, the object a
// create stores, u being its unstructured content from defaulted.
func (h *handler[O]) validateCreate(ctx context.Context, obj O, u map[string]any, errs field.ErrorList) field.ErrorList {
	if h.check == nil {
		return append(errs, h.scaleErrors(obj, true)...)
	}
	return h.check.Create(ctx, u, errs, h.scale.errors(u, true))
}

// validateUpdate is errs followed by the schema's violations of obj (u),
// the object an update of the main resource stores over old, ratcheting,
// and by those of its scale fields.
func (h *handler[O]) validateUpdate(ctx context.Context, obj O, u map[string]any, old O, errs field.ErrorList) (field.ErrorList, error) {
	if h.check == nil {
		return append(errs, h.scaleErrors(obj, true)...), nil
	}
	oldU, err := h.toUnstructured(old)
	if err != nil {
		return nil, err
	}
	return h.check.Update(ctx, u, oldU, errs, h.scale.errors(u, true)), nil
}

// validateStatusUpdate is the violations of obj (u), the object a write
// to /status stores over old (oldU), as a CRD's status strategy finds
// them: the status by the schema, the whole object by the CEL rules, and
// the scale subresource's status replicas.
func (h *handler[O]) validateStatusUpdate(ctx context.Context, obj O, u, oldU map[string]any) field.ErrorList {
	if h.check == nil {
		return h.scaleErrors(obj, false)
	}
	return h.check.StatusUpdate(ctx, u, oldU, nil, h.scale.errors(u, false))
}
