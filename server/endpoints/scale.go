package endpoints

import (
	"context"
	"fmt"
	"math"
	"strings"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/apiloom/apiloom/server/resource"
)

// The scale subresource (.../{name}/scale) shows an object as an
// autoscaling/v1 Scale and scales it by writing the Scale's spec.replicas
// into the object's field at Info.Scale.SpecReplicasPath, exactly as
// kube-apiserver serves a CRD's scale subresource: a write is an update of
// the object, with the main resource's rules (status kept, generation
// bumped, defaults and validation, a 422 naming the object's kind), and a
// Scale's resourceVersion, when it has one, is the precondition. Managed
// fields are kept on the Scale as apimachinery's ScaleHandler maps them:
// the owner of the object's replicas field owns the Scale's spec.replicas
// and the other way round, with the subresource "scale".
//
// The object's fields are read and written as its JSON form, as for a
// custom resource, so an omitted (omitempty, zero) spec replicas field is
// "not found" just as an absent one in a custom resource.

// scaleGVK is the kind the subresource serves.
var scaleGVK = autoscalingv1.SchemeGroupVersion.WithKind("Scale")

// unsetScaleReplicas marks, in the Scale a write starts from, an object
// whose spec replicas field is unset: a write that leaves it so is 400.
const unsetScaleReplicas = math.MinInt32

// scaleScheme converts, creates and defaults Scales for the scale field
// manager. It knows autoscaling/v1 only. Immutable after init.
var scaleScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := autoscalingv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

// scalePaths are a resource's scale paths split into field names.
type scalePaths struct {
	info     *resource.ScaleInfo
	spec     []string
	status   []string
	selector []string // nil without a selector path
	// mappings tell apimachinery's ScaleHandler where the replicas live.
	mappings managedfields.ResourcePathMappings
}

// newScalePaths are the scale paths of the resource whose scale
// subresource is info, in version gv of a kind whose other versions are
// others (the resource's own may be among them). The managed fields of
// every version map to the Scale's, each by its own replicas path (nil for
// a version without a scale subresource), as kube-apiserver maps those of
// every version of a CRD: ScaleHandler drops the entries of a version it
// has no mapping for.
func newScalePaths(info *resource.ScaleInfo, gv schema.GroupVersion, others []*resource.Info) *scalePaths {
	if info == nil {
		return nil
	}
	p := &scalePaths{info: info, spec: splitPath(info.SpecReplicasPath), status: splitPath(info.StatusReplicasPath)}
	if info.LabelSelectorPath != "" {
		p.selector = splitPath(info.LabelSelectorPath)
	}
	p.mappings = managedfields.ResourcePathMappings{}
	for _, o := range others {
		var path fieldpath.Path
		if o.Scale != nil {
			path = replicasPath(splitPath(o.Scale.SpecReplicasPath))
		}
		p.mappings[o.GroupVersion().String()] = path
	}
	p.mappings[gv.String()] = replicasPath(p.spec)
	return p
}

// replicasPath is the field path of the field names.
func replicasPath(names []string) fieldpath.Path {
	path := make(fieldpath.Path, 0, len(names))
	for _, name := range names {
		path = append(path, fieldpath.PathElement{FieldName: &name})
	}
	return path
}

// splitPath splits ".spec.replicas" into its field names.
func splitPath(p string) []string { return strings.Split(strings.TrimPrefix(p, "."), ".") }

// newScaleFieldManager is the field manager of writes through /scale: it
// tracks the fields of Scales, which ScaleHandler maps to the object's.
// Scales have no lists or maps to merge, so the deduced type converter
// gives the field sets a schema would.
func newScaleFieldManager() (*managedfields.FieldManager, error) {
	return managedfields.NewDefaultFieldManager(managedfields.NewDeducedTypeConverter(),
		scaleScheme, scaleScheme, scaleScheme, scaleGVK, scaleGVK.GroupVersion(), "scale", nil)
}

// scaleOf is the Scale of obj, whose JSON form is content. found is false
// when obj has no spec replicas field; its Scale then says 0.
func (p *scalePaths) scaleOf(obj metav1.Object, content map[string]any) (scale *autoscalingv1.Scale, found bool, err error) {
	spec, found, err := unstructured.NestedInt64(content, p.spec...)
	if err != nil {
		return nil, false, err
	}
	status, _, err := unstructured.NestedInt64(content, p.status...)
	if err != nil {
		return nil, false, err
	}
	var selector string
	if p.selector != nil {
		if selector, _, err = unstructured.NestedString(content, p.selector...); err != nil {
			return nil, false, err
		}
	}
	return &autoscalingv1.Scale{
		TypeMeta: metav1.TypeMeta{APIVersion: scaleGVK.GroupVersion().String(), Kind: scaleGVK.Kind},
		ObjectMeta: metav1.ObjectMeta{
			Name:              obj.GetName(),
			Namespace:         obj.GetNamespace(),
			UID:               obj.GetUID(),
			ResourceVersion:   obj.GetResourceVersion(),
			CreationTimestamp: obj.GetCreationTimestamp(),
		},
		Spec:   autoscalingv1.ScaleSpec{Replicas: int32(spec)},
		Status: autoscalingv1.ScaleStatus{Replicas: int32(status), Selector: selector},
	}, found, nil
}

// errors are the violations of obj's scale fields, as kube-apiserver
// checks a custom resource with a scale subresource on every write: the
// spec replicas (spec, on writes of the object) and the status replicas
// must be non-negative and fit an int32. The field paths keep their
// leading dot, as upstream's do. The selector, a string field of the type
// (the generator makes sure), cannot be wrong.
func (p *scalePaths) errors(content map[string]any, spec bool) field.ErrorList {
	if p == nil {
		return nil
	}
	var errs field.ErrorList
	check := func(path string, names []string) {
		n, _, err := unstructured.NestedInt64(content, names...)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(field.NewPath(path), n, err.Error()))
		case n < 0:
			errs = append(errs, field.Invalid(field.NewPath(path), n, "should be a non-negative integer"))
		case n > math.MaxInt32:
			errs = append(errs, field.Invalid(field.NewPath(path), n, fmt.Sprintf("should be less than or equal to %v", math.MaxInt32)))
		}
	}
	if spec {
		check(p.info.SpecReplicasPath, p.spec)
	}
	check(p.info.StatusReplicasPath, p.status)
	return errs
}

// scaleErrors are the violations of obj's scale fields (scalePaths.errors),
// none when the resource has no scale subresource.
func (h *handler[O]) scaleErrors(obj O, spec bool) field.ErrorList {
	if h.scale == nil {
		return nil
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return h.scale.errors(content, spec)
}

// currentScale is the Scale a write through /scale starts from: current's,
// with the managed fields of current that concern its replicas, and
// unsetScaleReplicas as replicas when current has none. It also returns
// current's JSON form, which the write changes, and the handler that maps
// the managed fields back.
func (h *handler[O]) currentScale(current O) (*autoscalingv1.Scale, map[string]any, *managedfields.ScaleHandler, error) {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(current)
	if err != nil {
		return nil, nil, nil, err
	}
	scale, found, err := h.scale.scaleOf(current, content)
	if err != nil {
		return nil, nil, nil, err
	}
	if !found {
		scale.Spec.Replicas = unsetScaleReplicas
	}
	sh := managedfields.NewScaleHandler(current.GetManagedFields(), h.gvk.GroupVersion(), h.scale.mappings)
	if scale.ManagedFields, err = sh.ToSubresource(); err != nil {
		return nil, nil, nil, err
	}
	return scale, content, sh, nil
}

// scaledObject is the object to store when scale, with its managed fields
// already tracked, is written over current: current's JSON form content
// with the spec replicas set, its managed fields mapped back, and the
// Scale's resourceVersion, if any, as the precondition; then prepared as
// any update of the object.
func (h *handler[O]) scaledObject(ctx context.Context, scale *autoscalingv1.Scale, current O, content map[string]any, sh *managedfields.ScaleHandler, rt route) (O, error) {
	var zero O
	if scale.Spec.Replicas == unsetScaleReplicas {
		return zero, apierrors.NewBadRequest(fmt.Sprintf("the spec replicas field %q cannot be empty", h.scale.info.SpecReplicasPath))
	}
	if err := unstructured.SetNestedField(content, int64(scale.Spec.Replicas), h.scale.spec...); err != nil {
		return zero, err
	}
	obj := h.def.New()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(content, obj); err != nil {
		return zero, err
	}
	if scale.ResourceVersion != "" {
		obj.SetResourceVersion(scale.ResourceVersion)
	}
	managed, err := sh.ToParent(scale.ManagedFields)
	if err != nil {
		return zero, err
	}
	obj.SetManagedFields(managed)
	if err := h.prepareUpdate(ctx, obj, current, nil, rt.namespace); err != nil {
		return zero, err
	}
	return obj, nil
}

// storedScale is the Scale of a stored object, for a response.
func (h *handler[O]) storedScale(obj O) (*autoscalingv1.Scale, bool, error) {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, false, err
	}
	return h.scale.scaleOf(obj, content)
}
