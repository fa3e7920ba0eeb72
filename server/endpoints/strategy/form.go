package strategy

import (
	"context"
	"fmt"
	"maps"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Every write reaches the kind's schema (resource.Info.Schema) through the
// functions below, in the order kube-apiserver admits a custom resource:
// decode, defaults, mutate (patch merge, apply, managed fields), validate,
// storage. A kind without a schema is only checked by the metadata rules
// (meta.go).
//
// What is validated is what a CRD validates: the object as the request
// gives it in JSON (a create or update body, the result of a JSON, merge
// or strategic merge patch; for /status the stored object with the
// request's status), as unstructured content, pruned and defaulted as
// kube-apiserver decodes a custom resource (DecodeForm), with the
// metadata the server sets (formContent). Only then does the typed object
// count: a field the request leaves out reads as missing, not as the Go
// zero value, an explicit "", [] or {} is seen before omitempty drops it,
// and a body of valid JSON that does not decode into the Go type (a string
// for an integer) gets the schema's 422 when the schema refuses it, and
// the decoding's 400 only when it does not.
//
// Conversions per write: the body is decoded twice, into the Go type (as
// before, for the strict field checks and their messages) and into
// unstructured content; a schema with defaults adds one conversion of the
// defaulted content to the Go type; the metadata is converted to
// unstructured content, and an update converts the stored object, the
// old object of ratcheting. Mutating hooks and server-side apply, which
// change the typed object, keep to the request's fields (presence.go);
// /scale validates the object's unstructured conversion (form nil).

// A form is an object a request wrote, as a CRD would validate it.
type Form struct {
	// content is the request's object as unstructured content, pruned
	// and defaulted (schemacheck.Check.Decoded). Its metadata is replaced
	// by the typed object's before it is validated (formContent).
	content map[string]any
	// typedErr is why content does not decode into the Go type, the
	// answer when the schema finds nothing wrong with it; nil when it
	// decodes.
	typedErr error
}

// decodeSchemaForm returns the typed object a write goes on with and the form
// of content, the unstructured content of the object a request sent, of
// which typed is the decoding into the Go type, typedErr why that failed.
// The form is pruned and defaulted as a CRD's objects are when decoded,
// and typed then takes the defaults (one conversion, when the schema has
// defaults). When typedErr is set, typed is a new object with only
// content's kind and metadata, enough for the metadata rules and the
// error messages, and the form keeps typedErr for when the schema accepts
// content. Without a schema, or when content is nil (not a JSON object) or
// even its metadata does not decode, typedErr is returned as it is.
func (k *Kind[O]) decodeSchemaForm(content map[string]any, typed O, typedErr error) (O, *Form, error) {
	var zero O
	if k.check == nil || content == nil {
		if typedErr != nil {
			return zero, nil, typedErr
		}
		return typed, nil, nil
	}
	if typedErr != nil {
		typed = k.def.New()
		head := map[string]any{"apiVersion": content["apiVersion"], "kind": content["kind"], "metadata": content["metadata"]}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(head, typed); err != nil {
			return zero, nil, typedErr
		}
	}
	k.check.Decoded(content)
	if typedErr == nil && k.check.HasDefaults() {
		defaulted := k.def.New()
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(content, defaulted); err != nil {
			return zero, nil, apierrors.NewInternalError(fmt.Errorf("converting defaulted %s: %w", k.gvk.Kind, err))
		}
		typed = defaulted
	}
	return typed, &Form{content: content, typedErr: typedErr}, nil
}

// formContent is the content to validate for obj, the object a write
// stores once the metadata rules ran, with f its request's form: f's
// content (a shallow copy, as a retried update uses f again) with obj's
// metadata, kind and apiVersion. Without a form, it is obj's conversion to
// unstructured content, defaulted (defaulted). With creating, the metadata
// is only what the schema can see of it (schemaMetadata).
func (k *Kind[O]) formContent(obj O, f *Form, creating bool) (map[string]any, error) {
	if f == nil {
		return k.defaulted(obj)
	}
	var meta any
	if creating {
		meta = schemaMetadata(obj)
	} else {
		var err error
		if meta, err = metadataContent(obj); err != nil {
			return nil, apierrors.NewInternalError(fmt.Errorf("converting the metadata of %s to unstructured: %w", k.gvk.Kind, err))
		}
	}
	u := maps.Clone(f.content)
	u["metadata"] = meta
	u["apiVersion"], u["kind"] = k.gvk.GroupVersion().String(), k.gvk.Kind
	return u, nil
}

// metadataContent is obj's metadata as unstructured content: its ObjectMeta
// alone converted when obj embeds one (every generated kind does), else
// taken from obj's whole conversion.
func metadataContent(obj metav1.Object) (any, error) {
	if a, ok := obj.(metav1.ObjectMetaAccessor); ok {
		if m, ok := a.GetObjectMeta().(*metav1.ObjectMeta); ok {
			return runtime.DefaultUnstructuredConverter.ToUnstructured(m)
		}
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	return u["metadata"], nil
}

// schemaMetadata is what a kind's schema can see of obj's metadata on a
// create: its name and generateName. A CRD's schema may constrain nothing
// else of the root metadata (apiextensions refuses other properties there,
// and defaults and rules on it), and its CEL rules see only these two
// fields of self.metadata, so a create is refused for the same causes as
// with the whole metadata (TestSchemaMetadataValidatesAsTheWholeMetadata).
// Converting the whole ObjectMeta, managed fields included, was 3% of the
// server's CPU on creates, by profile. An update keeps the whole metadata:
// ratcheting compares the new object with the old one whole, metadata
// included.
func schemaMetadata(obj metav1.Object) map[string]any {
	m := make(map[string]any, 2)
	if name := obj.GetName(); name != "" {
		m["name"] = name
	}
	if gen := obj.GetGenerateName(); gen != "" {
		m["generateName"] = gen
	}
	return m
}

// toUnstructured is obj's unstructured content, with its apiVersion and
// kind set (a decoded typed object may lack them).
func (k *Kind[O]) toUnstructured(obj O) (map[string]any, error) {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("converting %s to unstructured: %w", k.gvk.Kind, err))
	}
	u["apiVersion"], u["kind"] = k.gvk.GroupVersion().String(), k.gvk.Kind
	return u, nil
}

// defaulted applies the schema's defaults to obj, as kube-apiserver
// defaults a custom resource it decodes, and returns obj's unstructured
// content for validation (nil when the kind has no schema). Defaults fill
// fields absent from obj's JSON: a typed field with omitempty and a zero
// value is absent, as in the JSON the server stores.
func (k *Kind[O]) defaulted(obj O) (map[string]any, error) {
	if k.check == nil {
		return nil, nil
	}
	u, err := k.toUnstructured(obj)
	if err != nil || !k.check.HasDefaults() {
		return u, err
	}
	k.check.Default(u)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, obj); err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("converting defaulted %s: %w", k.gvk.Kind, err))
	}
	return u, nil
}

// ApplyDefaults applies the schema's defaults to obj, where nothing
// validates it yet: the object a server-side apply merged, before the
// field manager records it, so a defaulted field counts as set by its
// writer, as in kube-apiserver (request bodies and patches get theirs in
// DecodeForm). A conversion error leaves obj as it is; defaulted reports
// it later.
func (k *Kind[O]) ApplyDefaults(obj O) {
	k.kindDefaults(obj)
	if k.check != nil && k.check.HasDefaults() {
		_, _ = k.defaulted(obj)
	}
}

// kindErrors is what the kind's own validation (Definition.Validate, the
// upstream rules of a built-in kind) finds wrong with obj, the object a
// create (old the zero value, nil) or an update of old would store; none
// when the kind has no such function.
func (k *Kind[O]) kindErrors(obj, old O) field.ErrorList {
	if k.def.Validate == nil {
		return nil
	}
	return k.def.Validate(obj, old)
}

// validateCreate is errs (the metadata violations) followed by the
// schema's and the scale subresource's violations of obj, the object a
// create stores, u being its unstructured content from defaulted.
func (k *Kind[O]) validateCreate(ctx context.Context, obj O, u map[string]any, errs field.ErrorList) field.ErrorList {
	if k.check == nil {
		return append(errs, k.scaleErrors(obj, true)...)
	}
	return k.check.Create(ctx, u, errs, k.scaleContentErrors(u, true))
}

// validateUpdate is errs followed by the schema's violations of obj (u),
// the object an update of the main resource stores over old (oldU),
// ratcheting,
// and by those of its scale fields.
func (k *Kind[O]) validateUpdate(ctx context.Context, obj O, u, oldU map[string]any, errs field.ErrorList) field.ErrorList {
	if k.check == nil {
		return append(errs, k.scaleErrors(obj, true)...)
	}
	return k.check.Update(ctx, u, oldU, errs, k.scaleContentErrors(u, true))
}

// validateStatusUpdate is the violations of obj (u), the object a write
// to /status stores over old (oldU), as a CRD's status strategy finds
// them: the status by the schema, the whole object by the CEL rules, and
// the scale subresource's status replicas.
func (k *Kind[O]) validateStatusUpdate(ctx context.Context, obj O, u, oldU map[string]any) field.ErrorList {
	if k.check == nil {
		return k.scaleErrors(obj, false)
	}
	return k.check.StatusUpdate(ctx, u, oldU, nil, k.scaleContentErrors(u, false))
}

// scaleContentErrors are the violations of the scale fields of content,
// an object's unstructured content.
func (k *Kind[O]) scaleContentErrors(content map[string]any, spec bool) field.ErrorList {
	if k.scale == nil {
		return nil
	}
	return k.scale(content, spec)
}

// scaleErrors are the violations of obj's scale fields, none when the
// resource has no scale subresource.
func (k *Kind[O]) scaleErrors(obj O, spec bool) field.ErrorList {
	if k.scale == nil {
		return nil
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return k.scale(content, spec)
}
