package patch

import (
	"encoding/json"
	"fmt"
	"testing"
)

// FuzzPatchMeta feeds arbitrary patches to strategic merge patch: the
// patch meta from OpenAPI definitions merges exactly as kube-apiserver's
// struct-tag meta does, and fails alike.
func FuzzPatchMeta(f *testing.F) {
	for _, p := range smpMetaCorpus {
		f.Add([]byte(p))
	}
	for _, p := range []string{
		`{"spec":{"ports":[{"name":"b","port":91},{"name":"a","$patch":"delete"}]}}`,
		`{"spec":{"ports":[{"name":{"x":1}}]}}`, `{"spec":{"ports":[{"name":[1]}],"tags":[{"a":1}]}}`,
		`{"spec":{"$setElementOrder/ports":[{"name":"b"},{"name":"a"},{"name":"b"}]}}`,
		`{"metadata":{"labels":"x"},"spec":{"size":"x"}}`, `[]`, `null`, `{"spec":{"size":1,"size":2}}`,
	} {
		f.Add([]byte(p))
	}
	fromDefs, fromTags := metaOf(f, rigDefinitionsAsGenerated), metaOf(f, nil)
	f.Fuzz(func(t *testing.T, patch []byte) {
		var m map[string]any
		if json.Unmarshal(patch, &m) != nil {
			return
		}
		got, gotErr := mergeWith(t, fromDefs, rigOriginal, string(patch))
		want, wantErr := mergeWith(t, fromTags, rigOriginal, string(patch))
		if got != want || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Fatalf("%s:\nfrom definitions %s %v\nfrom struct tags %s %v", patch, got, gotErr, want, wantErr)
		}
	})
}
