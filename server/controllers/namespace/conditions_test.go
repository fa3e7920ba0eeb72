package namespace

import (
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestConditions: a pass that finds content held by finalizers sets the
// remaining conditions True; the next that finds nothing turns them False
// with upstream's ok reasons, moving lastTransitionTime only then; a pass
// that changes nothing reports no change.
func TestConditions(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Minute))
	p := newProgress()
	p.remaining[schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}] = 2
	p.finalizers["b/f"], p.finalizers["a/f"] = 1, 2
	var st corev1.NamespaceStatus
	if !updateConditions(&st, p.conditions(t0), t0) || len(st.Conditions) != len(conditionTypes) {
		t.Fatalf("first pass: %+v", st.Conditions)
	}
	remaining := condition(st.Conditions, corev1.NamespaceContentRemaining)
	if remaining.Status != corev1.ConditionTrue || remaining.Message != "Some resources are remaining: configmaps. has 2 resource instances" {
		t.Fatalf("remaining %+v", remaining)
	}
	fin := condition(st.Conditions, corev1.NamespaceFinalizersRemaining)
	if fin.Message != "Some content in the namespace has finalizers remaining: a/f in 2 resource instances, b/f in 1 resource instances" {
		t.Fatalf("finalizers %+v", fin)
	}
	if updateConditions(&st, p.conditions(t1), t1) {
		t.Fatal("the same pass again changed the conditions")
	}
	failed := newProgress()
	failed.deleteErrs = []error{errors.New("y"), errors.New("x")}
	updateConditions(&st, failed.conditions(t1), t1)
	if c := condition(st.Conditions, corev1.NamespaceDeletionContentFailure); c.Status != corev1.ConditionTrue ||
		c.Reason != "ContentDeletionFailed" || c.Message != "Failed to delete all resource types, 2 remaining: x, y" || !c.LastTransitionTime.Equal(&t1) {
		t.Fatalf("content failure %+v", c)
	}
	if c := condition(st.Conditions, corev1.NamespaceContentRemaining); c.Status != corev1.ConditionFalse || c.Reason != "ContentRemoved" ||
		c.Message != "All content successfully removed" || !c.LastTransitionTime.Equal(&t1) {
		t.Fatalf("content removed %+v", c)
	}
	if c := condition(st.Conditions, corev1.NamespaceDeletionDiscoveryFailure); !c.LastTransitionTime.Equal(&t0) {
		t.Fatalf("an unchanged condition moved: %+v", c)
	}
}
