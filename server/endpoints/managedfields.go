package endpoints

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/apiloom/apiloom/server/resource"
)

// Managed fields (metadata.managedFields) record which manager set which
// field, and with which operation: Apply for server-side apply, Update for
// every other write. Server-side apply needs them to merge a manager's
// configuration and to find conflicts, and people read them to learn who
// owns what. They are kept on every create, update, patch and /status
// write by k8s.io/apimachinery's field manager over structured-merge-diff,
// exactly as kube-apiserver keeps them, never by logic of our own: how
// lists and maps merge comes from the type converter (the OpenAPI schema
// of the kind, see WithTypeConverter), how entries are named, timed,
// merged per manager and capped at ten Update managers from the library.

// fieldManagers keeps the managed fields of one resource's objects: one
// field manager for writes to the object and one for writes to its status.
// Immutable after newFieldManagers and safe for concurrent use.
type fieldManagers struct {
	main *managedfields.FieldManager
	// status is nil when the resource has no status subresource.
	status *managedfields.FieldManager
	// finalize tracks writes through the finalize subresource, which
	// set anything but the status, as writes to the object do; nil
	// without one.
	finalize *managedfields.FieldManager
	// scale tracks writes through the scale subresource, whose Scales
	// ScaleHandler maps to the object (scale.go); nil without one.
	scale *managedfields.FieldManager
}

// newFieldManagers builds the field managers of def's objects over tc.
// Their reset fields are what the handlers ignore (meta.go): a write to
// the object never sets its status when there is a status subresource, and
// a write to /status sets nothing but the status (and the metadata, where
// the kind's status strategy keeps it). So no manager comes to
// own a field its write could not change, as with kube-apiserver's
// strategies that reset fields.
//
// A kind with several versions is compared across them: structured-merge-
// diff keeps each manager's fields in the version the manager wrote
// through and, to find what a write changes of them, converts the live and
// the new object into that version with conv, which versions (WithVersions)
// converts through the storage version. So a field one version renames
// has one owner, and an apply through one version conflicts with the
// owner of the same field in another, as in kube-apiserver.
func newFieldManagers[O resource.Object](def *resource.Definition[O], tc managedfields.TypeConverter, defaults func(O), versions KindVersions) (*fieldManagers, error) {
	gvk := def.GroupVersionKind()
	conv := typedConvertor[O]{def: def, gvk: gvk, defaults: defaults, versions: versions}
	version := fieldpath.APIVersion(gvk.GroupVersion().String())
	var mainReset map[fieldpath.APIVersion]fieldpath.Filter
	if def.HasStatus {
		mainReset = map[fieldpath.APIVersion]fieldpath.Filter{
			version: fieldpath.NewExcludeSetFilter(fieldpath.NewSet(fieldpath.MakePathOrDie("status"))),
		}
	}
	// The resource's version is the field manager's hub: a write's objects
	// are in it already, and other versions convert to and from it
	// (typedConvertor).
	main, err := managedfields.NewDefaultFieldManager(tc, conv, conv, conv, gvk, gvk.GroupVersion(), "", mainReset)
	if err != nil {
		return nil, err
	}
	fm := &fieldManagers{main: main}
	if def.HasFinalize {
		if fm.finalize, err = managedfields.NewDefaultFieldManager(tc, conv, conv, conv, gvk, gvk.GroupVersion(), "finalize", mainReset); err != nil {
			return nil, err
		}
	}
	if def.HasStatus {
		// A status write sets the status and, where the kind's status
		// strategy keeps it (a Namespace's), the metadata it carries
		// (takeMetadata): its writer owns what it changed of both.
		written := []*fieldpath.SetMatcher{fieldpath.MakePrefixMatcherOrDie("status")}
		if def.Strategy.StatusUpdatesMetadata {
			written = append(written, fieldpath.MakePrefixMatcherOrDie("metadata"))
		}
		statusReset := map[fieldpath.APIVersion]fieldpath.Filter{
			version: fieldpath.NewIncludeMatcherFilter(written...),
		}
		if fm.status, err = managedfields.NewDefaultFieldManager(tc, conv, conv, conv, gvk, gvk.GroupVersion(), "status", statusReset); err != nil {
			return nil, err
		}
	}
	if def.Scale != nil {
		if fm.scale, err = newScaleFieldManager(); err != nil {
			return nil, err
		}
	}
	return fm, nil
}

// forRoute is the field manager of a write through rt's endpoint.
func (f *fieldManagers) forRoute(rt route) *managedfields.FieldManager {
	switch {
	case rt.status:
		return f.status
	case rt.finalize:
		return f.finalize
	}
	return f.main
}

// trackCreate records in obj's managed fields, as an Update by manager,
// every field obj sets. obj is a decoded create body the caller owns; it
// has the resource's defaults already (decodeForm), as kube-apiserver's
// decoding gives them, so a defaulted field counts as set by its creator.
// Managed fields the client sent are the starting point when they parse
// (kube-apiserver lets a client write them), and are otherwise ignored.
func (h *handler[O]) trackCreate(obj O, manager string) O {
	obj.GetObjectKind().SetGroupVersionKind(h.gvk)
	return h.managed.main.UpdateNoErrors(h.newObject(), obj, manager).(O)
}

// trackUpdate records in obj's managed fields, as an Update by manager
// through rt's endpoint, every field obj changes from current. obj, which
// the caller owns, has the resource's defaults already (see trackCreate).
// Managed fields sent to the object's endpoint replace current's when they
// parse, and [{}] (or []) clears them; /status always starts from
// current's. A failure of the field manager, which valid objects never
// cause, keeps current's managed fields, as kube-apiserver does. With
// drop, obj gets no managed fields at all (withoutManagedFieldsIfTooLarge).
func (h *handler[O]) trackUpdate(obj, current O, manager string, rt route, drop bool) O {
	obj.GetObjectKind().SetGroupVersionKind(h.gvk)
	if drop {
		obj.SetManagedFields(nil)
		return obj
	}
	return h.managed.forRoute(rt).UpdateNoErrors(current, obj, manager).(O)
}

// withoutManagedFieldsIfTooLarge runs an update or patch, write(false),
// and when the result is too large to store runs it again as write(true),
// which stores the object without managed fields: they can be large, and
// kube-apiserver would rather lose them than the write. Server-side apply
// never does this, as its managed fields are the point.
func (h *handler[O]) withoutManagedFieldsIfTooLarge(write func(drop bool) (O, error)) (O, error) {
	result, err := write(false)
	if apierrors.IsRequestEntityTooLargeError(err) {
		return write(true)
	}
	return result, err
}

// newObject is an empty object of the resource, with its kind set: the
// "live" object of a create.
func (h *handler[O]) newObject() O {
	obj := h.def.New()
	obj.GetObjectKind().SetGroupVersionKind(h.gvk)
	return obj
}

// managerName is who a write is recorded as made by: the fieldManager
// parameter or, without one, the client's User-Agent up to its first "/"
// ("kubectl" for "kubectl/v1.37.1 (linux/amd64) kubernetes/..."), without
// unprintable characters and cut to the 128 bytes a fieldManager may have,
// as kube-apiserver derives it. The field manager records an empty name as
// "unknown".
func managerName(fieldManager, userAgent string) string {
	if fieldManager != "" {
		return fieldManager
	}
	prefix, _, _ := strings.Cut(userAgent, "/")
	var b strings.Builder
	for _, r := range prefix {
		if !unicode.IsPrint(r) {
			continue
		}
		if b.Len()+utf8.RuneLen(r) > metav1validation.FieldManagerMaxLength {
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}

// errNotConvertible is returned by typedConvertor for what the field
// manager never asks of it.
var errNotConvertible = errors.New("endpoints: unsupported conversion")

// typedConvertor is the runtime.ObjectConvertor, ObjectDefaulter and
// ObjectCreater the field manager asks for. Objects of the resource's own
// version only change representation: structured-merge-diff produces
// unstructured objects, which become the resource's typed ones. Objects
// are converted to and from the kind's other versions by versions.
type typedConvertor[O resource.Object] struct {
	def *resource.Definition[O]
	gvk schema.GroupVersionKind
	// defaults applies the schema's defaults (handler.applyDefaults).
	defaults func(O)
	// versions converts between the kind's versions; nil when the
	// resource's is its only one.
	versions KindVersions
}

var (
	_ runtime.ObjectConvertor = typedConvertor[resource.Object]{}
	_ runtime.ObjectDefaulter = typedConvertor[resource.Object]{}
	_ runtime.ObjectCreater   = typedConvertor[resource.Object]{}
)

// New implements runtime.ObjectCreater.
func (c typedConvertor[O]) New(kind schema.GroupVersionKind) (runtime.Object, error) {
	if kind != c.gvk {
		return nil, runtime.NewNotRegisteredErrForKind("apiloom", kind)
	}
	obj := c.def.New()
	obj.GetObjectKind().SetGroupVersionKind(c.gvk)
	return obj, nil
}

// Default implements runtime.ObjectDefaulter with the schema's defaults.
func (c typedConvertor[O]) Default(obj runtime.Object) {
	if o, ok := obj.(O); ok && c.defaults != nil {
		c.defaults(o)
	}
}

// ConvertToVersion implements runtime.ObjectConvertor. To the resource's
// version, a typed object of it is returned as it is and an unstructured
// one decoded into a new typed object; anything else is converted by
// versions, and is runtime's not-registered error without them, on which
// the field manager drops the managed fields of that version.
func (c typedConvertor[O]) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	gvk := in.GetObjectKind().GroupVersionKind()
	if c.isOwn(target) {
		switch o := in.(type) {
		case O:
			if gvk.Empty() || gvk == c.gvk {
				return o, nil
			}
		case runtime.Unstructured:
			if gvk == c.gvk {
				out := c.def.New()
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.UnstructuredContent(), out); err != nil {
					return nil, err
				}
				out.GetObjectKind().SetGroupVersionKind(c.gvk)
				return out, nil
			}
		}
	}
	if c.versions == nil {
		return nil, runtime.NewNotRegisteredErrForTarget("apiloom", reflect.TypeOf(in), target)
	}
	if o, ok := in.(O); ok && gvk.Empty() {
		// The handler's objects are of its version; versions reads the
		// version from the object, which may be shared.
		o = o.DeepCopyObject().(O)
		o.GetObjectKind().SetGroupVersionKind(c.gvk)
		in = o
	}
	return c.versions.ConvertToVersion(in, target)
}

// isOwn reports whether target is the resource's version. The field
// manager names versions by schema.GroupVersion, compared without the
// allocation of KindForGroupVersionKinds on every write.
func (c typedConvertor[O]) isOwn(target runtime.GroupVersioner) bool {
	if gv, ok := target.(schema.GroupVersion); ok {
		return gv == c.gvk.GroupVersion()
	}
	to, ok := target.KindForGroupVersionKinds([]schema.GroupVersionKind{c.gvk})
	return ok && to == c.gvk
}

// Convert implements runtime.ObjectConvertor; the field manager does not
// use it.
func (c typedConvertor[O]) Convert(in, _, _ any) error {
	return fmt.Errorf("%w: %T", errNotConvertible, in)
}

// ConvertFieldLabel implements runtime.ObjectConvertor; the field manager
// does not use it.
func (c typedConvertor[O]) ConvertFieldLabel(_ schema.GroupVersionKind, label, _ string) (string, string, error) {
	return "", "", fmt.Errorf("%w: field label %q", errNotConvertible, label)
}

// KindVersions are the served versions of a resource's kind, the
// resource's own among them, and the conversion of objects between any two
// of them (the registry's convert.Versions).
type KindVersions interface {
	runtime.ObjectConvertor
	// Infos are the versions, each once.
	Infos() []*resource.Info
}

// WithVersions sets the versions of the resource's kind. The field
// manager records each manager's fields in the version it wrote through,
// and compares a write with another manager's fields in that manager's
// version, converting the objects with v (managedfields.go), as
// kube-apiserver's does for a CRD with several versions; and /scale maps
// the replicas field of every version (scale.go). The registry sets it
// for every resource. Without it the resource's kind has one version:
// managed fields recorded in any other are dropped on the next write, as
// kube-apiserver drops those of a version its scheme does not know.
func WithVersions(v KindVersions) Option {
	return func(c *handlerConfig) { c.versions = v }
}
