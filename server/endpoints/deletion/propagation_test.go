package deletion

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestPropagationFinalizers: the request's policy replaces the object's
// garbage-collection finalizer; without one the object's decides.
func TestPropagationFinalizers(t *testing.T) {
	const (
		orphan = metav1.FinalizerOrphanDependents
		fg     = metav1.FinalizerDeleteDependents
		own    = "example.com/own"
	)
	policy := func(p metav1.DeletionPropagation) *metav1.DeletionPropagation { return &p }
	yes := true
	for _, c := range []struct {
		name    string
		opts    metav1.DeleteOptions
		have    []string
		want    []string
		changed bool
	}{
		{"no policy, no finalizers", metav1.DeleteOptions{}, nil, []string{}, false},
		{"no policy keeps the object's", metav1.DeleteOptions{}, []string{own, fg}, []string{own, fg}, false},
		{"orphan", metav1.DeleteOptions{PropagationPolicy: policy(metav1.DeletePropagationOrphan)}, []string{own}, []string{own, orphan}, true},
		{"orphanDependents", metav1.DeleteOptions{OrphanDependents: &yes}, nil, []string{orphan}, true},
		{"foreground replaces orphan", metav1.DeleteOptions{PropagationPolicy: policy(metav1.DeletePropagationForeground)}, []string{orphan, own}, []string{own, fg}, true},
		{"background removes both", metav1.DeleteOptions{PropagationPolicy: policy(metav1.DeletePropagationBackground)}, []string{fg}, []string{}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			obj := &metav1.ObjectMeta{Finalizers: c.have}
			got, changed := PropagationOf(c.opts).Finalizers(obj)
			if !slices.Equal(got, c.want) || changed != c.changed {
				t.Fatalf("Finalizers = %q, %v; want %q, %v", got, changed, c.want, c.changed)
			}
			// Apply leaves an unchanged set as it is (nil stays nil).
			pending := PropagationOf(c.opts).Apply(obj)
			if len(obj.Finalizers) != len(c.want) || (changed && !slices.Equal(obj.Finalizers, c.want)) || pending != (len(c.want) > 0) {
				t.Fatalf("Apply: pending %v, finalizers %q; want %q", pending, obj.Finalizers, c.want)
			}
		})
	}
}

func TestRegistryKey(t *testing.T) {
	if got, want := registryKey(schema.GroupResource{Group: "example.com", Resource: "widgets"}, "ns/w"), "/example.com/widgets/ns/w"; got != want {
		t.Fatalf("registryKey = %q, want %q", got, want)
	}
	if got, want := registryKey(schema.GroupResource{Group: "", Resource: "pods"}, "ns/p"), "/pods/ns/p"; got != want {
		t.Fatalf("registryKey = %q, want %q", got, want)
	}
}
