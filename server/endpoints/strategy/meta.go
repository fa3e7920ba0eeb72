package strategy

import (
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apiloom/apiloom/server/endpoints/storageerr"
	"github.com/apiloom/apiloom/server/resource"
)

// The metadata rules of writes, as kube-apiserver applies them to custom
// resources (rest.BeforeCreate/BeforeUpdate and the CRD strategy): the
// server owns uid, creationTimestamp, generation and the deletion fields;
// status is written only through /status when the resource has one.

// metaPath is the field path of ObjectMeta in validation errors.
var metaPath = field.NewPath("metadata")

// EnsureNamespace makes obj's namespace the request's: filled in when
// unset, cleared for cluster-scoped resources, 400 on a mismatch.
func (k *Kind[O]) EnsureNamespace(obj metav1.Object, namespace string) error {
	switch ns := obj.GetNamespace(); {
	case !k.def.Namespaced:
		obj.SetNamespace("")
	case ns == "":
		obj.SetNamespace(namespace)
	case ns != namespace:
		return ErrNamespaceMismatch
	}
	return nil
}

// ErrNamespaceMismatch is the 400 for a body whose namespace is not the
// request's.
var ErrNamespaceMismatch = apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")

// nameRule is the rule of the kind's object names: its own
// (Definition.ValidateName) or the DNS-subdomain rule.
func (k *Kind[O]) nameRule() apivalidation.ValidateNameFunc {
	if k.def.ValidateName != nil {
		return k.def.ValidateName
	}
	return apivalidation.NameIsDNSSubdomain
}

// decodeError is the error of a form whose content did not decode into
// the Go type, nil for none or no form.
func (f *Form) DecodeError() error {
	if f == nil {
		return nil
	}
	return f.typedErr
}

// Invalid is the 422 Invalid for the violations errs of obj, naming the
// kind and the object with every violation as a cause, as kube-apiserver
// answers a write that fails validation; nil when errs is empty. The
// kind is the stored one, which kube-apiserver validates: an
// events.k8s.io/v1 Event is refused as an Event of the core group.
func (k *Kind[O]) Invalid(obj O, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(schema.GroupKind{Group: k.def.StorageGroupVersion().Group, Kind: k.gvk.Kind}, obj.GetName(), errs)
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
func (k *Kind[O]) takeMetadata(current, obj O) field.ErrorList {
	old := copyObject(current)
	current.SetLabels(obj.GetLabels())
	current.SetAnnotations(obj.GetAnnotations())
	current.SetFinalizers(obj.GetFinalizers())
	current.SetOwnerReferences(obj.GetOwnerReferences())
	errs := apivalidation.ValidateObjectMetaAccessor(current, k.def.Namespaced, k.nameRule(), metaPath)
	return append(errs, apivalidation.ValidateObjectMetaAccessorUpdate(current, old, metaPath)...)
}

// CheckResourceVersion is the optimistic-concurrency check of an update:
// obj must carry current's resourceVersion (409 Conflict with another).
// Without one it is 422, unless the kind allows unconditional updates
// (resource.Strategy): obj then takes current's, and a concurrent write
// makes the update run again on the newer object.
func (k *Kind[O]) CheckResourceVersion(obj, current O) error {
	switch rv := obj.GetResourceVersion(); {
	case rv == "" && k.def.Strategy.UnconditionalUpdate:
		obj.SetResourceVersion(current.GetResourceVersion())
	case rv == "":
		// Upstream names the resource, not the kind, here.
		qualified := schema.GroupKind{Group: k.gr.Group, Kind: k.gr.Resource}
		return apierrors.NewInvalid(qualified, current.GetName(), field.ErrorList{
			field.Invalid(metaPath.Child("resourceVersion"), 0, "must be specified for an update"),
		})
	case rv != current.GetResourceVersion():
		return apierrors.NewConflict(k.gr, current.GetName(), storageerr.ErrOptimisticLock)
	}
	return nil
}

// setServerFields sets what the server owns of obj, which a create
// stores at now, after the mutating hooks, as kube-apiserver sets them
// after mutating admission: what the client or a hook wrote there is
// dropped.
func (k *Kind[O]) setServerFields(obj O, now time.Time) {
	obj.SetResourceVersion("")
	obj.SetSelfLink("")
	obj.SetDeletionTimestamp(nil)
	obj.SetDeletionGracePeriodSeconds(nil)
	obj.SetUID(types.UID(uuid.NewUUID()))
	obj.SetCreationTimestamp(metav1.NewTime(now.Truncate(time.Second)))
	if !k.def.Strategy.UntrackedGeneration {
		obj.SetGeneration(1)
	}
}

// keepServerFields sets on obj, which an update stores over current, what
// the server owns: current's uid when obj has none, its creationTimestamp
// and deletion fields, and the generation, which moves on when anything
// but metadata (and status) changed, where the kind tracks it.
func (k *Kind[O]) keepServerFields(obj, current O) {
	obj.SetGeneration(current.GetGeneration())
	if !k.def.Strategy.UntrackedGeneration && !k.def.SpecEqual(obj, current) {
		obj.SetGeneration(current.GetGeneration() + 1)
	}
	if obj.GetUID() == "" {
		obj.SetUID(current.GetUID())
	}
	obj.SetCreationTimestamp(current.GetCreationTimestamp())
	if current.GetDeletionTimestamp() != nil {
		obj.SetDeletionTimestamp(current.GetDeletionTimestamp())
	}
	if current.GetDeletionGracePeriodSeconds() != nil && obj.GetDeletionGracePeriodSeconds() == nil {
		obj.SetDeletionGracePeriodSeconds(current.GetDeletionGracePeriodSeconds())
	}
	obj.SetSelfLink("")
}

// copyObject returns a deep copy of obj.
func copyObject[O resource.Object](obj O) O {
	return obj.DeepCopyObject().(O)
}
