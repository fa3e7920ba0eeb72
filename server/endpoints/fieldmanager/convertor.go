package fieldmanager

import (
	"errors"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiloom/apiloom/server/resource"
)

// ErrNotConvertible is returned by the field manager's convertor for what
// the field manager never asks of it. Its text keeps the "endpoints:"
// prefix it had before this package was split out.
var ErrNotConvertible = errors.New("endpoints: unsupported conversion")

// KindVersions are the served versions of a resource's kind, the
// resource's own among them, and the conversion of objects between any two
// of them (the registry's convert.Versions).
type KindVersions interface {
	runtime.ObjectConvertor
	// Infos are the versions, each once.
	Infos() []*resource.Info
}

// typedConvertor is the runtime.ObjectConvertor, ObjectDefaulter and
// ObjectCreater the field manager asks for. Objects of the resource's own
// version only change representation: structured-merge-diff produces
// unstructured objects, which become the resource's typed ones. Objects
// are converted to and from the kind's other versions by versions.
type typedConvertor[O resource.Object] struct {
	def *resource.Definition[O]
	gvk schema.GroupVersionKind
	// defaults applies the schema's defaults (the handler's
	// applyDefaults).
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
	return fmt.Errorf("%w: %T", ErrNotConvertible, in)
}

// ConvertFieldLabel implements runtime.ObjectConvertor; the field manager
// does not use it.
func (c typedConvertor[O]) ConvertFieldLabel(_ schema.GroupVersionKind, label, _ string) (string, string, error) {
	return "", "", fmt.Errorf("%w: field label %q", ErrNotConvertible, label)
}
