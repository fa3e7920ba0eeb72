package registry

import (
	"reflect"

	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
)

// servedStorages holds the storage.Interface[O] of every served kind by
// its Go type O, so that parts of the server outside the handlers (the
// RBAC authorizer following Roles and Bindings) read the same watch caches
// the handlers serve. Build fills it; it is only read afterwards, so it
// needs no lock.
type servedStorages map[reflect.Type]any

// addStorage records iface as the storage of the objects of type O. Two
// resources served with one Go type (versions of a kind that differ only
// in name) keep the first Build serves: the storage version's.
func addStorage[O resource.Object](out *Served, iface storage.Interface[O]) {
	if out.byType == nil {
		out.byType = servedStorages{}
	}
	t := reflect.TypeFor[O]()
	if _, ok := out.byType[t]; !ok {
		out.byType[t] = iface
	}
}

// Storage returns the storage the served kind O is read and written
// through after Build: its watch cache, or its etcd store without one.
// ok is false when no resource of type O is served.
func Storage[O resource.Object](s *Served) (iface storage.Interface[O], ok bool) {
	iface, ok = s.byType[reflect.TypeFor[O]()].(storage.Interface[O])
	return iface, ok
}
