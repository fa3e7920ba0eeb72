package strategy

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/storage/storagetest"
)

func TestKeepManagedFieldsTimes(t *testing.T) {
	at := func(sec int64) *metav1.Time { tm := metav1.NewTime(time.Unix(sec, 0)); return &tm }
	mk := func(size int, times ...int64) *storagetest.Widget {
		w := storagetest.NewWidget("ns", "w", "red")
		w.Spec.Size = size
		for i, sec := range times {
			w.ManagedFields = append(w.ManagedFields, metav1.ManagedFieldsEntry{Manager: string(rune('a' + i)), Operation: metav1.ManagedFieldsOperationApply,
				APIVersion: "storagetest.apiloom.dev/v1", Time: at(sec), FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{}}`)}})
		}
		return w
	}
	for _, tc := range []struct {
		name      string
		obj, cur  *storagetest.Widget
		wantTimes []int64
	}{
		{"only timestamps moved", mk(1, 10, 20), mk(1, 10, 5), []int64{10, 5}},
		{"the object changed too", mk(2, 10, 20), mk(1, 10, 5), []int64{10, 20}},
		{"an entry was added", mk(1, 10, 20), mk(1, 10), []int64{10, 20}},
		{"nothing moved", mk(1, 10), mk(1, 10), []int64{10}},
	} {
		keepManagedFieldsTimes(tc.obj, tc.cur)
		var got []int64
		for _, en := range tc.obj.ManagedFields {
			got = append(got, en.Time.Unix())
		}
		if !slices.Equal(got, tc.wantTimes) {
			t.Errorf("%s: times %v, want %v", tc.name, got, tc.wantTimes)
		}
	}
	// An entry that differs in more than its time is a real change.
	obj, cur := mk(1, 10), mk(1, 5)
	obj.ManagedFields[0].FieldsV1.Raw = []byte(`{"f:spec":{"f:size":{}}}`)
	keepManagedFieldsTimes(obj, cur)
	if obj.ManagedFields[0].Time.Unix() != 10 {
		t.Errorf("changed entry lost its time: %v", obj.ManagedFields[0].Time)
	}
}
