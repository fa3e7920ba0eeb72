package fieldmanager

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// recordingVersions is a KindVersions that records what it converts.
type recordingVersions struct {
	infos []*resource.Info
	got   []runtime.Object
}

func (r *recordingVersions) Infos() []*resource.Info { return r.infos }

func (r *recordingVersions) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	r.got = append(r.got, in)
	out := in.DeepCopyObject()
	gvk, _ := target.KindForGroupVersionKinds([]schema.GroupVersionKind{in.GetObjectKind().GroupVersionKind()})
	out.GetObjectKind().SetGroupVersionKind(gvk)
	return out, nil
}

func (r *recordingVersions) Convert(_, _, _ any) error { return ErrNotConvertible }

func (r *recordingVersions) ConvertFieldLabel(_ schema.GroupVersionKind, _, _ string) (string, string, error) {
	return "", "", ErrNotConvertible
}

// TestTypedConvertorVersions: the field manager's convertor keeps objects
// of the resource's version as they are (decoding unstructured ones) and
// has the kind's versions convert to any other, giving them a shared
// object without apiVersion as a copy that has it; without versions,
// another version is runtime's not-registered error, on which the field
// manager drops the managed fields recorded in it.
func TestTypedConvertorVersions(t *testing.T) {
	def := storagetest.Definition()
	v2 := schema.GroupVersion{Group: def.Group, Version: "v2"}
	w := storagetest.NewWidget("ns", "w", "red")
	w.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})

	alone := typedConvertor[*storagetest.Widget]{def: def, gvk: def.GroupVersionKind()}
	if got, err := alone.ConvertToVersion(w, def.GroupVersion()); err != nil || got != runtime.Object(w) {
		t.Fatalf("to its own version: %v %v", got, err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": def.GroupVersion().String(), "kind": def.Kind, "spec": map[string]any{"color": "blue"},
	}}
	if got, err := alone.ConvertToVersion(u, def.GroupVersion()); err != nil || got.(*storagetest.Widget).Spec.Color != "blue" {
		t.Fatalf("unstructured to its own version: %#v %v", got, err)
	}
	if _, err := alone.ConvertToVersion(w, v2); !runtime.IsNotRegisteredError(err) {
		t.Fatalf("to v2 without versions: %v", err)
	}

	rec := &recordingVersions{}
	conv := typedConvertor[*storagetest.Widget]{def: def, gvk: def.GroupVersionKind(), versions: rec}
	got, err := conv.ConvertToVersion(w, v2)
	if err != nil || got.GetObjectKind().GroupVersionKind() != v2.WithKind(def.Kind) {
		t.Fatalf("to v2: %#v %v", got, err)
	}
	if len(rec.got) != 1 || rec.got[0] == runtime.Object(w) || rec.got[0].GetObjectKind().GroupVersionKind() != def.GroupVersionKind() ||
		!w.GroupVersionKind().Empty() {
		t.Fatalf("versions got %#v; the handler's object %s", rec.got, w.GroupVersionKind())
	}
	// An unstructured object of another version, to the resource's.
	u.SetAPIVersion(v2.String())
	if _, err := conv.ConvertToVersion(u, def.GroupVersion()); err != nil || len(rec.got) != 2 || rec.got[1] != runtime.Object(u) {
		t.Fatalf("unstructured v2 to v1: %v, versions got %d", err, len(rec.got))
	}
}
