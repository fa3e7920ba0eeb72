package endpoints

import (
	"encoding/json"
	"errors"
	"net/url"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/apiloom/apiloom/server/endpoints/patch"
	"github.com/apiloom/apiloom/server/endpoints/request"

	"github.com/apiloom/apiloom/server/endpoints/responsewriters"
)

// FuzzStrategicPatch feeds arbitrary patches, in every fieldValidation
// mode, to the strategic merge patch of a rig: it never panics and answers
// a Status when it refuses (including the reasonless 500 kube-apiserver
// answers for strategicpatch's unclassified errors). That the patch meta
// from OpenAPI definitions merges as kube-apiserver's struct-tag meta does
// is the patch package's FuzzPatchMeta.
func FuzzStrategicPatch(f *testing.F) {
	for _, p := range []string{
		`{}`, `{"spec":{"volumes":[{"name":"v1","mounts":["m2"]},{"name":"v2"}]}}`, `{"spec":{"strategy":{"$retainKeys":"type"}}}`,
		`{"spec":{"volumes":[{"name":"v1","$patch":"bogus"}]}}`, `{"spec":{"$setElementOrder/bogus":["q"]}}`, `{"spec":{"tags":[["x"]]}}`,
	} {
		f.Add([]byte(p), "Strict")
	}
	for _, p := range []string{
		`{"spec":{"ports":[{"name":"b","port":91},{"name":"a","$patch":"delete"}]}}`,
		`{"spec":{"ports":[{"name":{"x":1}}]}}`, `{"spec":{"ports":[{"name":[1]}],"tags":[{"a":1}]}}`,
		`{"spec":{"$setElementOrder/ports":[{"name":"b"},{"name":"a"},{"name":"b"}]}}`,
		`{"metadata":{"labels":"x"},"spec":{"size":"x"}}`, `[]`, `null`, `{"spec":{"size":1,"size":2}}`,
	} {
		f.Add([]byte(p), "Warn")
	}
	h := NewResource(rigDefinition(), nil, WithSchemas(patch.NewSchemas(rigDefinitions))).(*handler[*rig])
	var current rig
	if err := json.Unmarshal([]byte(rigOriginal), &current); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, patch []byte, fieldValidation string) {
		opts, err := request.ParsePatchOptions(url.Values{"fieldValidation": {fieldValidation}}, smpType)
		if err != nil {
			return
		}
		if !json.Valid(patch) {
			return // refused before (TestStrategicMergePatch)
		}
		obj, _, _, err := h.strategicPatch(patch, copyObject(&current), opts)
		if err != nil {
			var st apierrors.APIStatus
			if !errors.As(err, &st) {
				t.Fatalf("%s: %v is not a Status", patch, err)
			}
			if s := responsewriters.ToStatus(err); s.Code < 400 || s.Code > 500 || s.Message == "" {
				t.Fatalf("%s: %d %s %q", patch, s.Code, s.Reason, s.Message)
			}
		} else if _, err := json.Marshal(obj); err != nil {
			t.Fatalf("%s: the patched object does not encode: %v", patch, err)
		}
	})
}
