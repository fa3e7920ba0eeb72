package strategy

import (
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/resource"
)

// keepManagedFieldsTimes undoes what a write did to obj's managed fields
// when all it did was move timestamps and obj is otherwise current as it
// is: such a write then stores nothing (storage skips writes that change no
// byte), so repeating an update or an apply neither bumps the
// resourceVersion nor wakes watchers, as in kube-apiserver. A timestamp
// otherwise says when its manager last wrote.
func keepManagedFieldsTimes[O resource.Object](obj, current O) {
	mf, old := obj.GetManagedFields(), current.GetManagedFields()
	if !managedTimesOnlyMoved(mf, old) {
		return
	}
	kept := make([]metav1.ManagedFieldsEntry, len(mf))
	for i := range mf {
		kept[i] = mf[i]
		kept[i].Time = old[i].Time
	}
	obj.SetManagedFields(kept)
	if !equality.Semantic.DeepEqual(obj, current) {
		obj.SetManagedFields(mf)
	}
}

// managedTimesOnlyMoved reports whether the managed fields mf differ from
// old in timestamps and in nothing else.
func managedTimesOnlyMoved(mf, old []metav1.ManagedFieldsEntry) bool {
	if len(mf) == 0 || len(mf) != len(old) {
		return false
	}
	moved := false
	for i := range mf {
		a, b := mf[i], old[i]
		if !a.Time.Equal(b.Time) {
			moved = true
		}
		a.Time, b.Time = nil, nil
		if !reflect.DeepEqual(a, b) {
			return false
		}
	}
	return moved
}
