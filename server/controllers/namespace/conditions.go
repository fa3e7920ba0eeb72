package namespace

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The conditions kube-controller-manager's namespace deleter keeps on a
// Terminating namespace: each of these types is always present, False with
// its "ok" reason and message while nothing is wrong, True with what is.

// conditionTypes are the types kept, in upstream's order.
var conditionTypes = []corev1.NamespaceConditionType{
	corev1.NamespaceDeletionDiscoveryFailure,
	corev1.NamespaceDeletionGVParsingFailure,
	corev1.NamespaceDeletionContentFailure,
	corev1.NamespaceContentRemaining,
	corev1.NamespaceFinalizersRemaining,
}

// okReasons and okMessages are each type's False condition, upstream's words.
var (
	okReasons = map[corev1.NamespaceConditionType]string{
		corev1.NamespaceDeletionDiscoveryFailure: "ResourcesDiscovered",
		corev1.NamespaceDeletionGVParsingFailure: "ParsedGroupVersions",
		corev1.NamespaceDeletionContentFailure:   "ContentDeleted",
		corev1.NamespaceContentRemaining:         "ContentRemoved",
		corev1.NamespaceFinalizersRemaining:      "ContentHasNoFinalizers",
	}
	okMessages = map[corev1.NamespaceConditionType]string{
		corev1.NamespaceDeletionDiscoveryFailure: "All resources successfully discovered",
		corev1.NamespaceDeletionGVParsingFailure: "All legacy kube types successfully parsed",
		corev1.NamespaceDeletionContentFailure:   "All content successfully deleted, may be waiting on finalization",
		corev1.NamespaceContentRemaining:         "All content successfully removed",
		corev1.NamespaceFinalizersRemaining:      "All content-preserving finalizers finished",
	}
)

// progress is what one pass over a namespace's content found.
type progress struct {
	// remaining counts the objects left per resource.
	remaining map[schema.GroupVersionResource]int
	// finalizers counts the objects left per finalizer they carry.
	finalizers map[string]int
	// deleteErrs are the resources whose deletion failed.
	deleteErrs []error
}

func newProgress() *progress {
	return &progress{remaining: map[schema.GroupVersionResource]int{}, finalizers: map[string]int{}}
}

// conditions are the True conditions p calls for, in upstream's words.
func (p *progress) conditions(now metav1.Time) []corev1.NamespaceCondition {
	var out []corev1.NamespaceCondition
	if len(p.deleteErrs) > 0 {
		msgs := make([]string, 0, len(p.deleteErrs))
		for _, err := range p.deleteErrs {
			msgs = append(msgs, err.Error())
		}
		sort.Strings(msgs)
		out = append(out, corev1.NamespaceCondition{
			Type: corev1.NamespaceDeletionContentFailure, Status: corev1.ConditionTrue, LastTransitionTime: now,
			Reason:  "ContentDeletionFailed",
			Message: fmt.Sprintf("Failed to delete all resource types, %d remaining: %v", len(p.deleteErrs), strings.Join(msgs, ", ")),
		})
	}
	if len(p.remaining) > 0 {
		var parts []string
		for gvr, n := range p.remaining {
			parts = append(parts, fmt.Sprintf("%s.%s has %d resource instances", gvr.Resource, gvr.Group, n))
		}
		sort.Strings(parts)
		out = append(out, corev1.NamespaceCondition{
			Type: corev1.NamespaceContentRemaining, Status: corev1.ConditionTrue, LastTransitionTime: now,
			Reason: "SomeResourcesRemain", Message: "Some resources are remaining: " + strings.Join(parts, ", "),
		})
	}
	if len(p.finalizers) > 0 {
		var parts []string
		for f, n := range p.finalizers {
			parts = append(parts, fmt.Sprintf("%s in %d resource instances", f, n))
		}
		sort.Strings(parts)
		out = append(out, corev1.NamespaceCondition{
			Type: corev1.NamespaceFinalizersRemaining, Status: corev1.ConditionTrue, LastTransitionTime: now,
			Reason: "SomeFinalizersRemain", Message: "Some content in the namespace has finalizers remaining: " + strings.Join(parts, ", "),
		})
	}
	return out
}

// updateConditions sets every kept type of status to found's condition of
// that type, or to its ok condition, as upstream does: a condition that
// changes status moves its lastTransitionTime, one that only changes
// reason or message keeps it. It reports whether anything changed.
func updateConditions(status *corev1.NamespaceStatus, found []corev1.NamespaceCondition, now metav1.Time) bool {
	changed := false
	for _, t := range conditionTypes {
		want := condition(found, t)
		if want == nil {
			want = &corev1.NamespaceCondition{Type: t, Status: corev1.ConditionFalse, LastTransitionTime: now,
				Reason: okReasons[t], Message: okMessages[t]}
		}
		have := condition(status.Conditions, t)
		switch {
		case have == nil:
			status.Conditions = append(status.Conditions, *want)
			changed = true
		case have.Status != want.Status || have.Reason != want.Reason || have.Message != want.Message:
			if have.Status != want.Status {
				have.LastTransitionTime = now
			}
			have.Status, have.Reason, have.Message = want.Status, want.Reason, want.Message
			changed = true
		}
	}
	return changed
}

// condition is the condition of type t in cs, nil for none.
func condition(cs []corev1.NamespaceCondition, t corev1.NamespaceConditionType) *corev1.NamespaceCondition {
	for i := range cs {
		if cs[i].Type == t {
			return &cs[i]
		}
	}
	return nil
}
