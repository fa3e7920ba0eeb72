package ownerrefs

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/warning"
)

type recorder []string

func (r *recorder) AddWarning(_, text string) { *r = append(*r, text) }

// TestPluginDedups: a create's repeated owner references are kept once,
// in order, with the warning after mutation naming the uids left out;
// references that share a uid but differ elsewhere both stay.
func TestPluginDedups(t *testing.T) {
	a := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "a", UID: "uid-a"}
	aToo := metav1.OwnerReference{APIVersion: "v1", Kind: "Secret", Name: "a", UID: "uid-a"}
	b := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "b", UID: "uid-b"}
	obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "x", OwnerReferences: []metav1.OwnerReference{a, b, a, aToo, b}}}
	var warned recorder
	ctx := warning.WithWarningRecorder(t.Context(), &warned)
	attrs := admission.NewAttributesRecord(obj, nil, schema.GroupVersionKind{}, "", "x", schema.GroupVersionResource{}, "", admission.Create, nil, false, nil)
	if !(Plugin{}).Handles(admission.Create) || (Plugin{}).Handles(admission.Delete) {
		t.Fatal("Handles")
	}
	if err := (Plugin{}).Admit(ctx, attrs, nil); err != nil {
		t.Fatal(err)
	}
	if want := []metav1.OwnerReference{a, b, aToo}; !slices.EqualFunc(obj.OwnerReferences, want, func(x, y metav1.OwnerReference) bool { return x == y }) {
		t.Fatalf("kept %v, want %v", obj.OwnerReferences, want)
	}
	want := ".metadata.ownerReferences contains duplicate entries after mutating admission happens; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: uid-a, uid-b"
	if len(warned) != 1 || warned[0] != want {
		t.Fatalf("warned %q", warned)
	}
}
