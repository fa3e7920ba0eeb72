package patch

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/kube-openapi/pkg/common"
)

// rigDefinitionsAsGenerated are rigDefinitions as openapi-gen writes them,
// before the registry makes the ports' patch strategy explicit: they say
// what the struct tags say and nothing more.
func rigDefinitionsAsGenerated(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	defs := rigDefinitions(ref)
	d := defs[rigPkg+".rigSpec"]
	ports := d.Schema.Properties["ports"]
	ports.Extensions = map[string]any{"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": []any{"name"}}
	d.Schema.Properties["ports"] = ports
	defs[rigPkg+".rigSpec"] = d
	return defs
}

// mergeWith applies patch to original with meta, both decoded afresh.
func mergeWith(t testing.TB, meta strategicpatch.LookupPatchMeta, original, patch string) (string, error) {
	var o, p map[string]any
	if err := json.Unmarshal([]byte(original), &o); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(patch), &p); err != nil {
		return "", err
	}
	merged, err := strategicMerge(o, p, meta)
	if err != nil {
		return "", err
	}
	out, err := json.Marshal(merged)
	if err != nil {
		t.Fatal(err)
	}
	return string(out), nil
}

func metaOf(t testing.TB, defs common.GetOpenAPIDefinitions) strategicpatch.LookupPatchMeta {
	var s *Schemas
	if defs != nil {
		s = NewSchemas(defs)
	}
	m, err := Meta(s, rigPkg+".rig", new(rig))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// smpMetaCorpus are patches of every directive and error kind.
var smpMetaCorpus = []string{
	`{}`, `{"spec":{"size":3}}`, `{"metadata":{"labels":{"b":"2","a":null}}}`,
	`{"metadata":{"finalizers":["example.com/g"]}}`, `{"metadata":{"$deleteFromPrimitiveList/finalizers":["example.com/f"]}}`,
	`{"spec":{"tags":["y"],"zones":["z3"],"params":{"q":"2"}}}`,
	`{"spec":{"volumes":[{"name":"v1","mounts":["m2"]},{"name":"v2"}]}}`,
	`{"spec":{"volumes":[{"name":"v1","$patch":"delete"}]}}`,
	`{"spec":{"volumes":[{"$patch":"replace"},{"name":"v9"}]}}`,
	`{"spec":{"volumes":[{"name":"v1","$retainKeys":["name"]}]}}`,
	`{"spec":{"volumes":[{"name":"v1","$retainKeys":["name"],"size":3}]}}`,
	`{"spec":{"$setElementOrder/volumes":[{"name":"v2"},{"name":"v1"}],"volumes":[{"name":"v2"}]}}`,
	`{"spec":{"$setElementOrder/tags":["y","x"],"tags":["y"]}}`,
	`{"spec":{"$setElementOrder/tags":["q"],"tags":["y"]}}`,
	`{"spec":{"$setElementOrder/bogus":["q"]}}`, `{"spec":{"$setElementOrder/size":[1]}}`,
	`{"status":{"$setElementOrder/phase":[1]}}`, `{"spec":{"$setElementOrder/params":[1]}}`,
	`{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}}`,
	`{"spec":{"strategy":{"$retainKeys":"type"}}}`, `{"spec":{"strategy":{"$patch":"delete"}}}`,
	`{"spec":{"strategy":{"rolling":{"maxSurge":2}}}}`, `{"spec":{"strategy":{"rolling":{"$patch":"replace"}}}}`,
	`{"spec":{"params":{"$patch":"replace","r":"1"}}}`, `{"spec":{"params":{"p":{"x":1}}}}`,
	`{"spec":{"volumes":[{"size":1}]}}`, `{"spec":{"volumes":[{"name":"v1","$patch":"merge"}]}}`,
	`{"spec":{"volumes":[{"name":"v1","$patch":"bogus"}]}}`, `{"spec":{"volumes":["x"]}}`, `{"spec":{"volumes":[["x"]]}}`,
	`{"spec":{"tags":[1]}}`, `{"spec":{"tags":[["x"]]}}`, `{"spec":{"$deleteFromPrimitiveList/tags":["x"]}}`,
	`{"spec":{"$deleteFromPrimitiveList":["x"]}}`, `{"spec":{"$deleteFromPrimitiveList/zones":["z1"]}}`,
	`{"spec":{"$deleteFromPrimitiveList/volumes":[{"name":"v1"}]}}`,
	`{"spec":{"volumes":[{"name":"v1","mounts":[{"x":1}]}]}}`, `{"spec":{"bogus":{"a":1}}}`, `{"spec":{"$patch":"bogus"}}`,
	`{"$patch":"delete"}`, `{"$patch":"replace","spec":{}}`, `{"$retainKeys":["spec"]}`,
	// Fields are found ignoring case, as encoding/json finds them.
	`{"spec":{"$setElementOrder/TAGS":["x"]}}`, `{"spec":{"$setElementOrder/Volumes":[{"name":"v1"}],"Volumes":[{"name":"v1"}]}}`,
}

// TestPatchMetaFromDefinitionsIsKubeAPIServers: with definitions that say
// what the struct tags say, the OpenAPI patch meta merges every patch of
// the corpus as the struct-tag meta kube-apiserver uses for its built-in
// types does, and fails it with the same error.
func TestPatchMetaFromDefinitionsIsKubeAPIServers(t *testing.T) {
	fromDefs, fromTags := metaOf(t, rigDefinitionsAsGenerated), metaOf(t, nil)
	if _, ok := fromDefs.(patchMeta); !ok {
		t.Fatalf("meta with definitions is %T", fromDefs)
	}
	if _, ok := fromTags.(strategicpatch.PatchMetaFromStruct); !ok {
		t.Fatalf("meta without definitions is %T", fromTags)
	}
	for _, patch := range smpMetaCorpus {
		got, gotErr := mergeWith(t, fromDefs, rigOriginal, patch)
		want, wantErr := mergeWith(t, fromTags, rigOriginal, patch)
		if got != want || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Errorf("%s:\nfrom definitions %s %v\nfrom struct tags %s %v", patch, got, gotErr, want, wantErr)
		}
	}
}

// TestPatchMetaListMapMerges: with the registry's definitions a
// +listType=map list merges by its key, where the struct tags replace it.
func TestPatchMetaListMapMerges(t *testing.T) {
	patch := `{"spec":{"ports":[{"name":"b","port":91},{"name":"c"}]}}`
	got, err := mergeWith(t, metaOf(t, rigDefinitions), rigOriginal, patch)
	if err != nil || !strings.Contains(got, `"ports":[{"name":"a","port":80},{"name":"b","port":91},{"name":"c"}]`) {
		t.Fatalf("from definitions: %s %v", got, err)
	}
	got, err = mergeWith(t, metaOf(t, nil), rigOriginal, patch)
	if err != nil || !strings.Contains(got, `"ports":[{"name":"b","port":91},{"name":"c"}]`) {
		t.Fatalf("from struct tags: %s %v", got, err)
	}
}

// TestPatchMetaName: the name strategicpatch puts in "cannot merge lists
// without merge key for ..." is the Go kind, as the struct-tag meta's.
func TestPatchMetaName(t *testing.T) {
	m := metaOf(t, rigDefinitions)
	spec, _, err := m.LookupPatchMetadataForStruct("spec")
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"volumes": "struct", "tags": "string"} {
		sub, _, err := spec.LookupPatchMetadataForSlice(key)
		if err != nil || sub.Name() != want {
			t.Errorf("%s elements: %q %v, want %s", key, sub.Name(), err, want)
		}
	}
	params, _, err := spec.LookupPatchMetadataForStruct("params")
	if err != nil || params.Name() != "map" {
		t.Errorf("params: %q %v", params.Name(), err)
	}
}
