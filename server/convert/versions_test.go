package convert

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// twoVersions are the Widget stored as v1 and a v2 converted to it by
// versions' conversion (spec.size ten times over in storage).
func twoVersions(t *testing.T) (*Versions, *resource.Definition[*widget], *resource.Definition[*widget]) {
	t.Helper()
	stored, v2, conv := versions()
	v2.Version = "v2"
	v, err := NewVersions(StorageVersion(stored), ConvertedVersion(v2, conv))
	if err != nil {
		t.Fatal(err)
	}
	return v, stored, v2
}

// TestVersionsConvert: the field manager's conversions between a kind's
// versions go through the storage version, from typed and unstructured
// objects alike, give typed objects with their apiVersion and kind, and
// leave their input (which may be the watch cache's) as it was.
func TestVersionsConvert(t *testing.T) {
	v, stored, v2 := twoVersions(t)
	if got := v.Infos(); len(got) != 2 || got[0] != &stored.Info || got[1] != &v2.Info {
		t.Fatalf("infos %v", got)
	}

	in := &widget{}
	in.Name, in.Spec.Size = "w", 3
	in.GetObjectKind().SetGroupVersionKind(v2.GroupVersionKind())
	out, err := v.ConvertToVersion(in, stored.GroupVersion())
	if err != nil {
		t.Fatal(err)
	}
	w := out.(*widget)
	if w.Spec.Size != 3*sizeFactor || w.Name != "w" || w.GroupVersionKind() != stored.GroupVersionKind() {
		t.Fatalf("v2 to v1: %+v %s", w.Spec, w.GroupVersionKind())
	}
	if in.Spec.Size != 3 || in.GroupVersionKind() != v2.GroupVersionKind() {
		t.Fatalf("input changed: %+v %s", in.Spec, in.GroupVersionKind())
	}

	back, err := v.ConvertToVersion(w, v2.GroupVersion())
	if err != nil {
		t.Fatal(err)
	}
	if b := back.(*widget); b.Spec.Size != 3 || b.GroupVersionKind() != v2.GroupVersionKind() || w.Spec.Size != 3*sizeFactor {
		t.Fatalf("v1 to v2: %+v %s", b.Spec, b.GroupVersionKind())
	}

	// The version it is already in: the object itself.
	if same, err := v.ConvertToVersion(in, v2.GroupVersion()); err != nil || same != runtime.Object(in) {
		t.Fatalf("v2 to v2: %v %v", same, err)
	}

	// Unstructured, as structured-merge-diff gives them.
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v2.GroupVersion().String(), "kind": v2.Kind,
		"metadata": map[string]any{"name": "u"}, "spec": map[string]any{"size": int64(2)},
	}}
	for _, tc := range []struct {
		to   schema.GroupVersion
		size int
	}{{stored.GroupVersion(), 2 * sizeFactor}, {v2.GroupVersion(), 2}} {
		out, err := v.ConvertToVersion(u, tc.to)
		if err != nil {
			t.Fatal(err)
		}
		if w, ok := out.(*widget); !ok || w.Spec.Size != tc.size || w.Name != "u" || w.GroupVersionKind().GroupVersion() != tc.to {
			t.Fatalf("unstructured to %s: %#v", tc.to, out)
		}
	}
}

// TestVersionsNotServed: a version the kind does not serve, asked for or
// given, is runtime's not-registered error, on which the field manager
// drops the managed fields recorded in it.
func TestVersionsNotServed(t *testing.T) {
	v, stored, v2 := twoVersions(t)
	in := &widget{}
	in.GetObjectKind().SetGroupVersionKind(v2.GroupVersionKind())
	v3 := schema.GroupVersion{Group: stored.Group, Version: "v3"}
	if _, err := v.ConvertToVersion(in, v3); !runtime.IsNotRegisteredError(err) {
		t.Fatalf("to v3: %v", err)
	}
	in.GetObjectKind().SetGroupVersionKind(v3.WithKind(stored.Kind))
	if _, err := v.ConvertToVersion(in, stored.GroupVersion()); !runtime.IsNotRegisteredError(err) {
		t.Fatalf("from v3: %v", err)
	}
	if _, err := v.ConvertToVersion(&widget{}, stored.GroupVersion()); !runtime.IsNotRegisteredError(err) {
		t.Fatalf("without apiVersion: %v", err)
	}
	in.GetObjectKind().SetGroupVersionKind(stored.GroupVersion().WithKind("Other"))
	if _, err := v.ConvertToVersion(in, v2.GroupVersion()); !runtime.IsNotRegisteredError(err) {
		t.Fatalf("another kind: %v", err)
	}
}

// TestNewVersionsRefuses what are not the versions of one kind stored in
// one of them.
func TestNewVersionsRefuses(t *testing.T) {
	stored, v2, conv := versions()
	v2.Version = "v2"
	other := storagetest.Definition()
	other.Kind = "Gadget"
	v3 := storagetest.Definition()
	v3.Version, v3.StorageVersion = "v3", "v9"
	for name, vs := range map[string][]Version{
		"no storage version":   {ConvertedVersion(v2, conv)},
		"two storage versions": {StorageVersion(stored), StorageVersion(v2)},
		"two kinds":            {StorageVersion(stored), StorageVersion(other)},
		"a version twice":      {StorageVersion(stored), ConvertedVersion(stored, conv)},
		"another storage":      {StorageVersion(stored), ConvertedVersion(v3, conv)},
		"one way only":         {StorageVersion(stored), {Info: &v2.Info, New: StorageVersion(v2).New, ToStorage: ConvertedVersion(v2, conv).ToStorage}},
	} {
		_, err := NewVersions(vs...)
		if !errors.Is(err, ErrVersions) {
			t.Errorf("%s: %v, want ErrVersions", name, err)
		}
	}
}

// TestVersionsAcrossGroups: a version in another API group, stored as the
// storage version (as events.k8s.io/v1 Event is stored as core/v1
// Event), is one kind with it: NewVersions takes the two, and the field
// manager's conversions go both ways, the target named by a GroupVersion
// of the other group.
func TestVersionsAcrossGroups(t *testing.T) {
	stored, other, conv := versions()
	other.Group, other.Version = "other.example.com", "v7"
	other.StorageVersion, other.StorageAPIVersion = stored.Version, stored.GroupVersion().String()
	v, err := NewVersions(StorageVersion(stored), ConvertedVersion(other, conv))
	if err != nil {
		t.Fatal(err)
	}
	in := &widget{}
	in.Name, in.Spec.Size = "w", 2
	in.GetObjectKind().SetGroupVersionKind(other.GroupVersionKind())
	out, err := v.ConvertToVersion(in, stored.GroupVersion())
	if err != nil {
		t.Fatal(err)
	}
	if w := out.(*widget); w.Spec.Size != 2*sizeFactor || w.GroupVersionKind() != stored.GroupVersionKind() {
		t.Fatalf("to the storage group: %+v %s", w.Spec, w.GroupVersionKind())
	}
	back, err := v.ConvertToVersion(out, other.GroupVersion())
	if err != nil {
		t.Fatal(err)
	}
	if w := back.(*widget); w.Spec.Size != 2 || w.GroupVersionKind() != other.GroupVersionKind() {
		t.Fatalf("back to the other group: %+v %s", w.Spec, w.GroupVersionKind())
	}
	// Without StorageAPIVersion the other group's version would be stored
	// in its own group: not a version of this kind.
	other.StorageAPIVersion = ""
	if _, err := NewVersions(StorageVersion(stored), ConvertedVersion(other, conv)); !errors.Is(err, ErrVersions) {
		t.Fatalf("another group without StorageAPIVersion: %v, want ErrVersions", err)
	}
}
