package scale

import (
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

// GVK is the kind the subresource serves.
var GVK = autoscalingv1.SchemeGroupVersion.WithKind("Scale")

// unsetReplicas marks, in the Scale a write starts from, an object whose
// spec replicas field is unset: a write that leaves it so is 400.
const unsetReplicas = math.MinInt32

// scheme converts, creates and defaults Scales for the scale field
// manager. It knows autoscaling/v1 only. Immutable after init.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := autoscalingv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

// Subresource is a resource's scale subresource: its scale paths split
// into field names, and the field manager of writes through it.
// Immutable after New and safe for concurrent use.
type Subresource struct {
	info     *resource.ScaleInfo
	gv       schema.GroupVersion
	spec     []string
	status   []string
	selector []string // nil without a selector path
	// mappings tell apimachinery's ScaleHandler where the replicas live.
	mappings managedfields.ResourcePathMappings
	// fm tracks the fields of Scales, which ScaleHandler maps to the
	// object's.
	fm *managedfields.FieldManager
}

// New is the scale subresource info of a resource in version gv of a kind
// whose other versions are others (the resource's own may be among them);
// nil when info is. The managed fields of every version map to the
// Scale's, each by its own replicas path (nil for a version without a
// scale subresource), as kube-apiserver maps those of every version of a
// CRD: ScaleHandler drops the entries of a version it has no mapping for.
func New(info *resource.ScaleInfo, gv schema.GroupVersion, others []*resource.Info) (*Subresource, error) {
	if info == nil {
		return nil, nil
	}
	p := &Subresource{info: info, gv: gv, spec: splitPath(info.SpecReplicasPath), status: splitPath(info.StatusReplicasPath)}
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
	var err error
	if p.fm, err = newFieldManager(); err != nil {
		return nil, err
	}
	return p, nil
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

// newFieldManager is the field manager of writes through /scale: it
// tracks the fields of Scales, which ScaleHandler maps to the object's.
// Scales have no lists or maps to merge, so the deduced type converter
// gives the field sets a schema would.
func newFieldManager() (*managedfields.FieldManager, error) {
	return managedfields.NewDefaultFieldManager(managedfields.NewDeducedTypeConverter(),
		scheme, scheme, scheme, GVK, GVK.GroupVersion(), "scale", nil)
}

// SpecReplicasPath is the path of the object's spec replicas field, as
// the kind declares it (".spec.replicas").
func (p *Subresource) SpecReplicasPath() string { return p.info.SpecReplicasPath }

// Track records in scale's managed fields, as an Update by manager, every
// field scale changes from old.
func (p *Subresource) Track(old, scale *autoscalingv1.Scale, manager string) *autoscalingv1.Scale {
	return p.fm.UpdateNoErrors(old, scale, manager).(*autoscalingv1.Scale)
}

// Apply merges the applied Scale configuration patch into old by manager,
// as the field manager of Scales applies.
func (p *Subresource) Apply(old *autoscalingv1.Scale, patch runtime.Object, manager string, force bool) (runtime.Object, error) {
	return p.fm.Apply(old, patch, manager, force)
}

// scaleOf is the Scale of obj, whose JSON form is content. found is false
// when obj has no spec replicas field; its Scale then says 0.
func (p *Subresource) scaleOf(obj metav1.Object, content map[string]any) (scale *autoscalingv1.Scale, found bool, err error) {
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
		TypeMeta: metav1.TypeMeta{APIVersion: GVK.GroupVersion().String(), Kind: GVK.Kind},
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

// Errors are the violations of the scale fields of an object whose JSON
// form is content, as kube-apiserver checks a custom resource with a
// scale subresource on every write: the spec replicas (spec, on writes of
// the object) and the status replicas must be non-negative and fit an
// int32. The field paths keep their leading dot, as upstream's do. The
// selector, a string field of the type (the generator makes sure), cannot
// be wrong. None on a nil Subresource.
func (p *Subresource) Errors(content map[string]any, spec bool) field.ErrorList {
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

// Current is the Scale a write through /scale starts from: current's,
// with the managed fields of current that concern its replicas, and
// unsetReplicas as replicas when current has none. It also returns
// current's JSON form, which the write changes, and the handler that maps
// the managed fields back (both for Scaled).
func (p *Subresource) Current(current resource.Object) (*autoscalingv1.Scale, map[string]any, *managedfields.ScaleHandler, error) {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(current)
	if err != nil {
		return nil, nil, nil, err
	}
	scale, found, err := p.scaleOf(current, content)
	if err != nil {
		return nil, nil, nil, err
	}
	if !found {
		scale.Spec.Replicas = unsetReplicas
	}
	sh := managedfields.NewScaleHandler(current.GetManagedFields(), p.gv, p.mappings)
	if scale.ManagedFields, err = sh.ToSubresource(); err != nil {
		return nil, nil, nil, err
	}
	return scale, content, sh, nil
}

// Scaled sets obj, a new object of the resource, to what is stored when
// scale, with its managed fields already tracked, is written over the
// object whose Current gave content and sh: content with the spec
// replicas set, its managed fields mapped back, and the Scale's
// resourceVersion, if any, as the precondition. The caller then prepares
// obj as any update of the object.
func (p *Subresource) Scaled(obj resource.Object, scale *autoscalingv1.Scale, content map[string]any, sh *managedfields.ScaleHandler) error {
	if scale.Spec.Replicas == unsetReplicas {
		return apierrors.NewBadRequest(fmt.Sprintf("the spec replicas field %q cannot be empty", p.info.SpecReplicasPath))
	}
	if err := unstructured.SetNestedField(content, int64(scale.Spec.Replicas), p.spec...); err != nil {
		return err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(content, obj); err != nil {
		return err
	}
	if scale.ResourceVersion != "" {
		obj.SetResourceVersion(scale.ResourceVersion)
	}
	managed, err := sh.ToParent(scale.ManagedFields)
	if err != nil {
		return err
	}
	obj.SetManagedFields(managed)
	return nil
}

// Stored is the Scale of a stored object, for a response. found is false
// when obj has no spec replicas field.
func (p *Subresource) Stored(obj resource.Object) (scale *autoscalingv1.Scale, found bool, err error) {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, false, err
	}
	return p.scaleOf(obj, content)
}
