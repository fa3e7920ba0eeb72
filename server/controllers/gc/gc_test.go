package gc

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

func TestGraphFieldsOnly(t *testing.T) {
	now := metav1.Now()
	kept := metav1.ObjectMeta{
		Name: "a", Namespace: "ns", UID: "u1", ResourceVersion: "7",
		OwnerReferences:   []metav1.OwnerReference{cmRef("owner", "u0")},
		Finalizers:        []string{metav1.FinalizerDeleteDependents},
		DeletionTimestamp: &now, DeletionGracePeriodSeconds: ptr.To[int64](0),
	}
	full := kept.DeepCopy()
	full.Labels = map[string]string{"app": "x"}
	full.Annotations = map[string]string{"note": "y"}
	full.Generation = 3
	full.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "m", Operation: metav1.ManagedFieldsOperationApply}}
	in := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: *full}

	out, err := graphFieldsOnly(in)
	if err != nil {
		t.Fatal(err)
	}
	want := &metav1.PartialObjectMetadata{TypeMeta: in.TypeMeta, ObjectMeta: kept}
	if !equality.Semantic.DeepEqual(out, want) {
		t.Fatalf("got %+v\nwant %+v", out, want)
	}
	tomb := cache.DeletedFinalStateUnknown{Key: "ns/a", Obj: want}
	if out, _ := graphFieldsOnly(tomb); out != tomb {
		t.Fatalf("a tombstone came back as %+v", out)
	}
}
