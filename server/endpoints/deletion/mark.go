package deletion

import (
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiloom/apiloom/server/storage"
)

// Mark records that obj's deletion was requested, as kube-apiserver does
// for objects with finalizers: deletionTimestamp now (kept if already
// set), a grace period of 0 and, the first time, the next generation.
func Mark(obj metav1.Object, now time.Time) {
	if obj.GetDeletionTimestamp() == nil {
		if obj.GetGeneration() > 0 {
			obj.SetGeneration(obj.GetGeneration() + 1)
		}
		ts := metav1.NewTime(now.Truncate(time.Second))
		obj.SetDeletionTimestamp(&ts)
	}
	var zero int64
	obj.SetDeletionGracePeriodSeconds(&zero)
}

// Preconditions are the storage form of opts.Preconditions.
func Preconditions(opts metav1.DeleteOptions) *storage.Preconditions {
	if opts.Preconditions == nil || (opts.Preconditions.UID == nil && opts.Preconditions.ResourceVersion == nil) {
		return nil
	}
	pre := &storage.Preconditions{ResourceVersion: opts.Preconditions.ResourceVersion}
	if opts.Preconditions.UID != nil {
		uid := string(*opts.Preconditions.UID)
		pre.UID = &uid
	}
	return pre
}

// CheckPreconditions is kube-apiserver's first check of a delete's
// preconditions, on the object read: 409 Conflict naming kind, the
// object's kind qualified by its group, in its words. A concurrent change
// after the read is caught by storage's own check (storage.CheckPreconditions'
// words).
func CheckPreconditions(pre *storage.Preconditions, current metav1.Object, kind schema.GroupResource) error {
	if pre == nil {
		return nil
	}
	switch {
	case pre.UID != nil && *pre.UID != string(current.GetUID()):
		return apierrors.NewConflict(kind, current.GetName(), fmt.Errorf(
			"the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *pre.UID, current.GetUID()))
	case pre.ResourceVersion != nil && *pre.ResourceVersion != current.GetResourceVersion():
		return apierrors.NewConflict(kind, current.GetName(), fmt.Errorf(
			"the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *pre.ResourceVersion, current.GetResourceVersion()))
	}
	return nil
}
