package svm

import (
	"testing"

	svmv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/resource"
)

// TestFindResource: the storage version's resource is preferred, another
// served version of the kind stands in, and an unserved one is not found.
func TestFindResource(t *testing.T) {
	v1 := &resource.Info{Group: "example.dev", Version: "v1", Plural: "dbs", StorageVersion: "v1"}
	v2 := &resource.Info{Group: "example.dev", Version: "v2", Plural: "dbs", StorageVersion: "v1"}
	other := &resource.Info{Group: "other.dev", Version: "v1", Plural: "dbs"}
	gr := metav1.GroupResource{Group: "example.dev", Resource: "dbs"}
	if got, ok := findResource([]*resource.Info{other, v2, v1}, gr); !ok || got != v1 {
		t.Errorf("with the storage version served: %+v %v", got, ok)
	}
	if got, ok := findResource([]*resource.Info{v2, other}, gr); !ok || got != v2 {
		t.Errorf("without it: %+v %v", got, ok)
	}
	if _, ok := findResource([]*resource.Info{other}, gr); ok {
		t.Error("an unserved resource was found")
	}
}

// TestProgressAnnotation: the recorded progress reads back; an unreadable
// one is no progress (the migration starts over).
func TestProgressAnnotation(t *testing.T) {
	s := &svmv1.StorageVersionMigration{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
		ProgressAnnotation: `{"lastKey":"ns/db-9","rewritten":7,"current":3,"newer":2,"gone":1}`}}}
	want := Progress{LastKey: "ns/db-9", Rewritten: 7, Current: 3, Newer: 2, Gone: 1}
	if got := progressOf(s); got != want {
		t.Errorf("progress %+v, want %+v", got, want)
	}
	if got, want := want.String(), `The migration is running, 7 objects rewritten, 3 already current, 2 already newer, 1 gone, through "ns/db-9"`; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	s.Annotations[ProgressAnnotation] = "{"
	if got := progressOf(s); got != (Progress{}) {
		t.Errorf("unreadable progress read as %+v", got)
	}
}

// TestFinished: Succeeded or Failed True ends a migration; Running does not.
func TestFinished(t *testing.T) {
	for _, tc := range []struct {
		cond svmv1.MigrationConditionType
		s    metav1.ConditionStatus
		want bool
	}{
		{svmv1.MigrationRunning, metav1.ConditionTrue, false},
		{svmv1.MigrationSucceeded, metav1.ConditionTrue, true},
		{svmv1.MigrationSucceeded, metav1.ConditionFalse, false},
		{svmv1.MigrationFailed, metav1.ConditionTrue, true},
	} {
		s := &svmv1.StorageVersionMigration{Status: svmv1.StorageVersionMigrationStatus{Conditions: []metav1.Condition{{Type: string(tc.cond), Status: tc.s}}}}
		if got := finished(s); got != tc.want {
			t.Errorf("%s=%s: finished %v", tc.cond, tc.s, got)
		}
	}
}
