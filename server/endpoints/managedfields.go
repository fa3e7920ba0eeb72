package endpoints

import (
	"github.com/apiloom/apiloom/server/endpoints/fieldmanager"
)

// Managed fields are kept by package fieldmanager; what follows is how the
// verbs of this package reach it.

// managedSubresource names the subresource a write through rt is recorded
// under by the field managers ("" for the object's own endpoint, and for
// /scale, whose writes store the object).
func managedSubresource(rt route) string {
	switch {
	case rt.status:
		return fieldmanager.Status
	case rt.finalize:
		return fieldmanager.Finalize
	}
	return ""
}

// trackCreate records in obj's managed fields, as an Update by manager,
// every field obj sets (fieldmanager.Managers.TrackCreate).
func (h *handler[O]) trackCreate(obj O, manager string) O {
	return h.managed.TrackCreate(obj, manager)
}

// trackUpdate records in obj's managed fields, as an Update by manager
// through rt's endpoint, every field obj changes from current; with drop,
// obj gets no managed fields at all (fieldmanager.Managers.TrackUpdate).
func (h *handler[O]) trackUpdate(obj, current O, manager string, rt route, drop bool) O {
	return h.managed.TrackUpdate(obj, current, manager, managedSubresource(rt), drop)
}

// withoutManagedFieldsIfTooLarge runs an update or patch, write(false),
// and when the result is too large to store runs it again as write(true),
// without managed fields (fieldmanager.WithoutIfTooLarge).
func (h *handler[O]) withoutManagedFieldsIfTooLarge(write func(drop bool) (O, error)) (O, error) {
	return fieldmanager.WithoutIfTooLarge(write)
}

// newObject is an empty object of the resource, with its kind set: the
// "live" object of a create.
func (h *handler[O]) newObject() O { return h.managed.NewObject() }

// WithVersions sets the versions of the resource's kind. The field
// manager records each manager's fields in the version it wrote through,
// and compares a write with another manager's fields in that manager's
// version, converting the objects with v (package fieldmanager), as
// kube-apiserver's does for a CRD with several versions; and /scale maps
// the replicas field of every version (package scale). The registry sets
// it for every resource. Without it the resource's kind has one version:
// managed fields recorded in any other are dropped on the next write, as
// kube-apiserver drops those of a version its scheme does not know.
func WithVersions(v fieldmanager.KindVersions) Option {
	return func(c *handlerConfig) { c.versions = v }
}
