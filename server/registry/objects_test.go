package registry

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// TestObjectInterfaces: the admission plugins create any served version,
// convert between versions through the storage version, copy a patched
// object back in place, default a built-in kind, and find a resource's
// equivalents in other versions and its subresources' kinds.
func TestObjectInterfaces(t *testing.T) {
	stored := storagetest.Definition()
	stored.Default = func(w *storagetest.Widget) {
		if w.Spec.Color == "" {
			w.Spec.Color = "grey"
		}
	}
	v2 := storagetest.Definition()
	v2.Version, v2.StorageVersion = "v2", "v1"
	r := &Registry{}
	Register(r, stored)
	RegisterConverted(r, v2, resource.Conversion[*storagetest.Widget, *storagetest.Widget]{
		Storage:     stored,
		ToStorage:   func(in, out *storagetest.Widget) error { *out = *in; out.Spec.Size = in.Spec.Size / 10; return nil },
		FromStorage: func(in, out *storagetest.Widget) error { *out = *in; out.Spec.Size = in.Spec.Size * 10; return nil },
	})
	o, err := r.ObjectInterfaces()
	if err != nil {
		t.Fatal(err)
	}
	v1GVK, v2GVK := stored.GroupVersionKind(), v2.GroupVersionKind()

	if obj, err := o.GetObjectCreater().New(v2GVK); err != nil {
		t.Fatalf("new %s: %v", v2GVK, err)
	} else if _, ok := obj.(*storagetest.Widget); !ok {
		t.Fatalf("new %s: %T", v2GVK, obj)
	}

	in := storagetest.NewWidget("ns", "w", "red")
	in.Spec.Size = 3
	out, err := o.GetObjectConvertor().ConvertToVersion(in, v2GVK.GroupVersion())
	if err != nil {
		t.Fatal(err)
	}
	if w := out.(*storagetest.Widget); w.Spec.Size != 30 || w.GroupVersionKind() != v2GVK {
		t.Fatalf("v1 to v2: %+v", w)
	}
	if in.GroupVersionKind() != (schema.GroupVersionKind{}) || in.Spec.Size != 3 {
		t.Fatalf("the input changed: %+v", in)
	}

	dst := &storagetest.Widget{}
	if err := o.GetObjectConvertor().Convert(out, dst, nil); err != nil || dst.Spec.Size != 30 || dst.Name != "w" {
		t.Fatalf("copy in place: %v %+v", err, dst)
	}

	blank := &storagetest.Widget{}
	o.GetObjectDefaulter().Default(blank)
	if blank.Spec.Color != "grey" {
		t.Fatalf("defaults: %+v", blank)
	}

	m := o.GetEquivalentResourceMapper()
	v1GVR, v2GVR := stored.GroupVersionResource(), v2.GroupVersionResource()
	if eq := m.EquivalentResourcesFor(v1GVR, ""); len(eq) != 2 || eq[0] != v1GVR || eq[1] != v2GVR {
		t.Fatalf("equivalents of %s: %v", v1GVR, eq)
	}
	if k := m.KindFor(v2GVR, "status"); k != v2GVK {
		t.Fatalf("kind of %s/status: %v", v2GVR, k)
	}
	if k := m.KindFor(v1GVR, "scale"); !k.Empty() {
		t.Fatalf("kind of a scale subresource the kind lacks: %v", k)
	}

	mapping, err := r.RESTMapper().RESTMapping(v1GVK.GroupKind())
	if err != nil || mapping.Resource != v1GVR || mapping.Scope.Name() != "namespace" {
		t.Fatalf("mapping of %s: %+v, %v", v1GVK.GroupKind(), mapping, err)
	}
}
