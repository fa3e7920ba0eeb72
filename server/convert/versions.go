package convert

import (
	"errors"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiloom/apiloom/server/resource"
)

// Version is one served version of a kind as Versions converts it: its
// objects are resource.Objects, whatever their Go type.
type Version struct {
	Info *resource.Info
	// New returns a new, empty object of the version.
	New func() resource.Object
	// ToStorage and FromStorage convert to and from the storage version;
	// both are nil for the storage version itself.
	ToStorage   func(in, out resource.Object) error
	FromStorage func(in, out resource.Object) error
}

// StorageVersion is def, the version a kind's objects are stored in, as
// Versions converts it.
func StorageVersion[S resource.Object](def *resource.Definition[S]) Version {
	return Version{Info: &def.Info, New: func() resource.Object { return def.New() }}
}

// ConvertedVersion is def, a version stored as conv.Storage, as Versions
// converts it.
func ConvertedVersion[O, S resource.Object](def *resource.Definition[O], conv resource.Conversion[O, S]) Version {
	return Version{
		Info: &def.Info,
		New:  func() resource.Object { return def.New() },
		ToStorage: func(in, out resource.Object) error {
			o, ok1 := in.(O)
			s, ok2 := out.(S)
			if !ok1 || !ok2 {
				return fmt.Errorf("%w: %T to %T", errWrongType, in, out)
			}
			return conv.ToStorage(o, s)
		},
		FromStorage: func(in, out resource.Object) error {
			s, ok1 := in.(S)
			o, ok2 := out.(O)
			if !ok1 || !ok2 {
				return fmt.Errorf("%w: %T to %T", errWrongType, in, out)
			}
			return conv.FromStorage(s, o)
		},
	}
}

// errWrongType is wrapped when an object is not of the Go type of the
// version its kind says it is.
var errWrongType = errors.New("convert: object of the wrong type")

// ErrVersions is wrapped by NewVersions' errors: versions that are not
// those of one kind with one storage version.
var ErrVersions = errors.New("convert: not the versions of one kind")

// Versions converts the objects of one kind between any two of its served
// versions, through the storage version as every read and write does
// (Storage): the runtime.ObjectConvertor that k8s.io/apimachinery's field
// manager asks for. structured-merge-diff records which fields a manager
// owns in the version it wrote through, so comparing a write with another
// manager's fields means converting both objects into that manager's
// version first; kube-apiserver's field manager does it with its scheme
// (built-in kinds) or a CRD's converter, apiloom's with this. Immutable
// after NewVersions and safe for concurrent use.
type Versions struct {
	storage *Version
	byGV    map[schema.GroupVersion]*Version
	infos   []*resource.Info
}

var _ runtime.ObjectConvertor = (*Versions)(nil)

// NewVersions returns the converter between versions, which must be the
// versions of one kind, exactly one of them its storage version, each
// other one converted to it. A version may be in another API group than
// its storage version (events.k8s.io/v1 Event and core/v1 Event): the
// kind is one by its storage, not by its group.
func NewVersions(versions ...Version) (*Versions, error) {
	v := &Versions{byGV: make(map[schema.GroupVersion]*Version, len(versions))}
	for i := range versions {
		ver := &versions[i]
		info := ver.Info
		if first := versions[0].Info; info.StorageGroupVersion().Group != first.StorageGroupVersion().Group || info.Kind != first.Kind {
			return nil, fmt.Errorf("%w: %s and %s", ErrVersions, first.GroupVersionKind(), info.GroupVersionKind())
		}
		if _, dup := v.byGV[info.GroupVersion()]; dup {
			return nil, fmt.Errorf("%w: %s twice", ErrVersions, info.GroupVersionKind())
		}
		switch stored := ver.ToStorage == nil; {
		case stored && v.storage != nil:
			return nil, fmt.Errorf("%w: two storage versions of %s, %s and %s", ErrVersions, info.Kind, v.storage.Info.Version, info.Version)
		case stored:
			v.storage = ver
		case ver.FromStorage == nil:
			return nil, fmt.Errorf("%w: %s converts to its storage version only", ErrVersions, info.GroupVersionKind())
		}
		v.byGV[info.GroupVersion()] = ver
		v.infos = append(v.infos, info)
	}
	if v.storage == nil {
		return nil, fmt.Errorf("%w: no storage version", ErrVersions)
	}
	for _, ver := range v.byGV {
		if ver != v.storage && ver.Info.StorageGroupVersion() != v.storage.Info.GroupVersion() {
			return nil, fmt.Errorf("%w: %s is stored as %s, not %s", ErrVersions, ver.Info.GroupVersionKind(), ver.Info.StorageGroupVersion(), v.storage.Info.GroupVersion())
		}
	}
	return v, nil
}

// Infos are the versions, in the order NewVersions was given them.
func (v *Versions) Infos() []*resource.Info { return v.infos }

// ConvertToVersion implements runtime.ObjectConvertor: in, a typed or
// unstructured object of one of the kind's versions (its apiVersion and
// kind say which), becomes a typed object of the version target names,
// with its apiVersion and kind. A version the kind does not serve is
// runtime's not-registered error, on which the field manager forgets the
// managed fields recorded in it, as kube-apiserver's scheme has it do for
// a built-in kind. The result may share memory with in, which must not
// change while it is used (conversions may alias, as conversion-gen's do).
func (v *Versions) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	fromGVK := in.GetObjectKind().GroupVersionKind()
	from, ok := v.byGV[fromGVK.GroupVersion()]
	if !ok || fromGVK.Kind != from.Info.Kind {
		return nil, runtime.NewNotRegisteredErrForKind("apiloom", fromGVK)
	}
	toGVK, ok := target.KindForGroupVersionKinds([]schema.GroupVersionKind{fromGVK})
	if gv, isGV := target.(schema.GroupVersion); isGV && !ok {
		// A GroupVersion finds kinds of its own group only; the kind's
		// versions may be in several (events.k8s.io and core Events).
		toGVK, ok = gv.WithKind(fromGVK.Kind), true
	}
	if !ok {
		return nil, runtime.NewNotRegisteredErrForTarget("apiloom", reflect.TypeOf(in), target)
	}
	to, ok := v.byGV[toGVK.GroupVersion()]
	if !ok || toGVK.Kind != to.Info.Kind {
		return nil, runtime.NewNotRegisteredErrForKind("apiloom", toGVK)
	}
	obj, err := v.typed(in, from)
	if err != nil {
		return nil, err
	}
	if from == to {
		return obj, nil
	}
	return v.convert(obj, from, to)
}

// typed is in as a typed object of version from: itself, or decoded from
// its unstructured content.
func (v *Versions) typed(in runtime.Object, from *Version) (resource.Object, error) {
	if u, ok := in.(runtime.Unstructured); ok {
		out := from.New()
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), out); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrConversion, from.Info.GroupVersionKind(), err)
		}
		out.GetObjectKind().SetGroupVersionKind(from.Info.GroupVersionKind())
		return out, nil
	}
	obj, ok := in.(resource.Object)
	if !ok {
		return nil, fmt.Errorf("%w: %T as %s", errWrongType, in, from.Info.GroupVersionKind())
	}
	return obj, nil
}

// convert is obj, of version from, in version to (another one), through
// the storage version: a new object, with its apiVersion and kind, while
// obj, which may be shared, is left as it is.
func (v *Versions) convert(obj resource.Object, from, to *Version) (resource.Object, error) {
	stored := obj
	if from != v.storage {
		stored = v.storage.New()
		if err := from.ToStorage(obj, stored); err != nil {
			return nil, fmt.Errorf("%w: %s to %s: %w", ErrConversion, from.Info.Version, v.storage.Info.Version, err)
		}
		stored.GetObjectKind().SetGroupVersionKind(v.storage.Info.GroupVersionKind())
	}
	if to == v.storage {
		return stored, nil
	}
	out := to.New()
	if err := to.FromStorage(stored, out); err != nil {
		return nil, fmt.Errorf("%w: %s to %s: %w", ErrConversion, v.storage.Info.Version, to.Info.Version, err)
	}
	out.GetObjectKind().SetGroupVersionKind(to.Info.GroupVersionKind())
	return out, nil
}

// errUnsupported is returned for what the field manager never asks.
var errUnsupported = errors.New("convert: unsupported conversion")

// Convert implements runtime.ObjectConvertor; the field manager does not
// use it.
func (v *Versions) Convert(in, _, _ any) error {
	return fmt.Errorf("%w: %T", errUnsupported, in)
}

// ConvertFieldLabel implements runtime.ObjectConvertor; the field manager
// does not use it.
func (v *Versions) ConvertFieldLabel(_ schema.GroupVersionKind, label, _ string) (string, string, error) {
	return "", "", fmt.Errorf("%w: field label %q", errUnsupported, label)
}
