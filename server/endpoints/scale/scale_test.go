package scale

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/apiloom/apiloom/server/resource"
)

// TestScalePathsOfEveryVersion: /scale maps the replicas path of every
// version of the kind, each its own, and nil for a version without a
// scale subresource, as kube-apiserver does for a CRD: ScaleHandler drops
// the managed fields of a version it has no mapping for.
func TestScalePathsOfEveryVersion(t *testing.T) {
	own := schema.GroupVersion{Group: "g", Version: "v2"}
	p, err := New(&resource.ScaleInfo{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas"}, own, []*resource.Info{
		{Group: "g", Version: "v1", Scale: &resource.ScaleInfo{SpecReplicasPath: ".spec.size", StatusReplicasPath: ".status.size"}},
		{Group: "g", Version: "v2"},
		{Group: "g", Version: "v3"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]fieldpath.Path{
		"g/v1": fieldpath.MakePathOrDie("spec", "size"),
		"g/v2": fieldpath.MakePathOrDie("spec", "replicas"),
		"g/v3": nil,
	}
	if len(p.mappings) != len(want) {
		t.Fatalf("mappings %v", p.mappings)
	}
	for gv, path := range want {
		got, ok := p.mappings[gv]
		if !ok || got.String() != path.String() || (path == nil) != (got == nil) {
			t.Errorf("%s: %v (%t), want %v", gv, got, ok, path)
		}
	}
}
