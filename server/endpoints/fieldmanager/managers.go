package fieldmanager

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
// of the kind, see endpoints.WithTypeConverter), how entries are named,
// timed, merged per manager and capped at ten Update managers from the
// library.

// The subresources whose writes For tells apart; any other name is a
// write to the object itself.
const (
	Status   = "status"
	Finalize = "finalize"
)

// Managers keeps the managed fields of one resource's objects: one
// field manager for writes to the object and one for writes to its status.
// Immutable after New and safe for concurrent use.
type Managers[O resource.Object] struct {
	def  *resource.Definition[O]
	gvk  schema.GroupVersionKind
	main *managedfields.FieldManager
	// status is nil when the resource has no status subresource.
	status *managedfields.FieldManager
	// finalize tracks writes through the finalize subresource, which
	// set anything but the status, as writes to the object do; nil
	// without one.
	finalize *managedfields.FieldManager
}

// New builds the field managers of def's objects over tc.
// Their reset fields are what the handlers ignore (endpoints' meta.go): a
// write to the object never sets its status when there is a status
// subresource, and a write to /status sets nothing but the status (and the
// metadata, where the kind's status strategy keeps it). So no manager
// comes to own a field its write could not change, as with
// kube-apiserver's strategies that reset fields.
//
// A kind with several versions is compared across them: structured-merge-
// diff keeps each manager's fields in the version the manager wrote
// through and, to find what a write changes of them, converts the live and
// the new object into that version with conv, which versions converts
// through the storage version. So a field one version renames has one
// owner, and an apply through one version conflicts with the owner of the
// same field in another, as in kube-apiserver. defaults applies the
// schema's defaults; versions is nil when the resource's version is its
// kind's only one.
func New[O resource.Object](def *resource.Definition[O], tc managedfields.TypeConverter, defaults func(O), versions KindVersions) (*Managers[O], error) {
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
	fm := &Managers[O]{def: def, gvk: gvk, main: main}
	if def.HasFinalize {
		if fm.finalize, err = managedfields.NewDefaultFieldManager(tc, conv, conv, conv, gvk, gvk.GroupVersion(), Finalize, mainReset); err != nil {
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
		if fm.status, err = managedfields.NewDefaultFieldManager(tc, conv, conv, conv, gvk, gvk.GroupVersion(), Status, statusReset); err != nil {
			return nil, err
		}
	}
	return fm, nil
}

// For is the field manager of a write through the subresource endpoint
// named (Status, Finalize), or of a write to the object itself for any
// other name ("").
func (f *Managers[O]) For(subresource string) *managedfields.FieldManager {
	switch subresource {
	case Status:
		return f.status
	case Finalize:
		return f.finalize
	}
	return f.main
}

// TrackCreate records in obj's managed fields, as an Update by manager,
// every field obj sets. obj is a decoded create body the caller owns; it
// has the resource's defaults already (decodeForm), as kube-apiserver's
// decoding gives them, so a defaulted field counts as set by its creator.
// Managed fields the client sent are the starting point when they parse
// (kube-apiserver lets a client write them), and are otherwise ignored.
func (f *Managers[O]) TrackCreate(obj O, manager string) O {
	obj.GetObjectKind().SetGroupVersionKind(f.gvk)
	return f.main.UpdateNoErrors(f.NewObject(), obj, manager).(O)
}

// TrackUpdate records in obj's managed fields, as an Update by manager
// through the subresource's endpoint (For), every field obj changes from
// current. obj, which the caller owns, has the resource's defaults already
// (see TrackCreate). Managed fields sent to the object's endpoint replace
// current's when they parse, and [{}] (or []) clears them; /status always
// starts from current's. A failure of the field manager, which valid
// objects never cause, keeps current's managed fields, as kube-apiserver
// does. With drop, obj gets no managed fields at all
// (WithoutIfTooLarge).
func (f *Managers[O]) TrackUpdate(obj, current O, manager, subresource string, drop bool) O {
	obj.GetObjectKind().SetGroupVersionKind(f.gvk)
	if drop {
		obj.SetManagedFields(nil)
		return obj
	}
	return f.For(subresource).UpdateNoErrors(current, obj, manager).(O)
}

// NewObject is an empty object of the resource, with its kind set: the
// "live" object of a create.
func (f *Managers[O]) NewObject() O {
	obj := f.def.New()
	obj.GetObjectKind().SetGroupVersionKind(f.gvk)
	return obj
}

// WithoutIfTooLarge runs an update or patch, write(false), and when the
// result is too large to store runs it again as write(true), which stores
// the object without managed fields: they can be large, and kube-apiserver
// would rather lose them than the write. Server-side apply never does
// this, as its managed fields are the point.
func WithoutIfTooLarge[O any](write func(drop bool) (O, error)) (O, error) {
	result, err := write(false)
	if apierrors.IsRequestEntityTooLargeError(err) {
		return write(true)
	}
	return result, err
}
