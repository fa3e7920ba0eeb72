package endpoints

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The metadata rules of writes, as kube-apiserver applies them to custom
// resources (rest.BeforeCreate/BeforeUpdate and the CRD strategy): the
// server owns uid, creationTimestamp, generation and the deletion fields;
// status is written only through /status when the resource has one.

// metaPath is the field path of ObjectMeta in validation errors.
var metaPath = field.NewPath("metadata")

// ensureNamespace makes obj's namespace the request's: filled in when
// unset, cleared for cluster-scoped resources, 400 on a mismatch.
func (h *handler[O]) ensureNamespace(obj metav1.Object, namespace string) error {
	switch ns := obj.GetNamespace(); {
	case !h.def.Namespaced:
		obj.SetNamespace("")
	case ns == "":
		obj.SetNamespace(namespace)
	case ns != namespace:
		return errNamespaceMismatch
	}
	return nil
}

// errNamespaceMismatch is the 400 for a body whose namespace is not the
// request's.
var errNamespaceMismatch = apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")

// nameRule is the rule of the kind's object names: its own
// (Definition.ValidateName) or the DNS-subdomain rule.
func (h *handler[O]) nameRule() apivalidation.ValidateNameFunc {
	if h.def.ValidateName != nil {
		return h.def.ValidateName
	}
	return apivalidation.NameIsDNSSubdomain
}

// decodeError is the error of a form whose content did not decode into
// the Go type, nil for none or no form.
func (f *form) decodeError() error {
	if f == nil {
		return nil
	}
	return f.typedErr
}

// invalid is the 422 Invalid for the violations errs of obj, naming the
// kind and the object with every violation as a cause, as kube-apiserver
// answers a write that fails validation; nil when errs is empty. The
// kind is the stored one, which kube-apiserver validates: an
// events.k8s.io/v1 Event is refused as an Event of the core group.
func (h *handler[O]) invalid(obj O, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(schema.GroupKind{Group: h.def.StorageGroupVersion().Group, Kind: h.gvk.Kind}, obj.GetName(), errs)
}

// setOrDelete sets dst[key] to src[key], or deletes it when src has none.
func setOrDelete(dst map[string]any, key string, src map[string]any) {
	if v, ok := src[key]; ok {
		dst[key] = v
	} else {
		delete(dst, key)
	}
}

// takeMetadata sets on current, the stored object a status write goes
// over, the metadata a client may write that obj, the request's object,
// carries (labels, annotations, finalizers, owner references), for a kind
// whose status strategy keeps them (resource.Strategy), and returns what
// the metadata rules say of the result.
func (h *handler[O]) takeMetadata(current, obj O) field.ErrorList {
	old := copyObject(current)
	current.SetLabels(obj.GetLabels())
	current.SetAnnotations(obj.GetAnnotations())
	current.SetFinalizers(obj.GetFinalizers())
	current.SetOwnerReferences(obj.GetOwnerReferences())
	errs := apivalidation.ValidateObjectMetaAccessor(current, h.def.Namespaced, h.nameRule(), metaPath)
	return append(errs, apivalidation.ValidateObjectMetaAccessorUpdate(current, old, metaPath)...)
}

// checkResourceVersion is the optimistic-concurrency check of an update:
// obj must carry current's resourceVersion (409 Conflict with another).
// Without one it is 422, unless the kind allows unconditional updates
// (resource.Strategy): obj then takes current's, and a concurrent write
// makes the update run again on the newer object.
func (h *handler[O]) checkResourceVersion(obj, current O) error {
	switch rv := obj.GetResourceVersion(); {
	case rv == "" && h.def.Strategy.UnconditionalUpdate:
		obj.SetResourceVersion(current.GetResourceVersion())
	case rv == "":
		// Upstream names the resource, not the kind, here.
		qualified := schema.GroupKind{Group: h.gr.Group, Kind: h.gr.Resource}
		return apierrors.NewInvalid(qualified, current.GetName(), field.ErrorList{
			field.Invalid(metaPath.Child("resourceVersion"), 0, "must be specified for an update"),
		})
	case rv != current.GetResourceVersion():
		return apierrors.NewConflict(h.gr, current.GetName(), errOptimisticLock)
	}
	return nil
}
