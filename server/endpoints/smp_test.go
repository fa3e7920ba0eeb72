package endpoints

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/endpoints/patch"
	"github.com/apiloom/apiloom/server/storage"
)

const smpType = "application/strategic-merge-patch+json"

// rigSpecJSON is the spec every rig of these tests starts with.
const rigSpecJSON = `{"size":2,"ports":[{"name":"a","port":80},{"name":"b","port":81}],"tags":["x"],` +
	`"volumes":[{"name":"v1","size":1,"mounts":["m1"]}],"zones":["z1","z2"],` +
	`"strategy":{"type":"Rolling","rolling":{"maxSurge":1}},"params":{"p":"1"}}`

// specOf is a rig's spec as JSON, for exact comparison.
func specOf(t *testing.T, r *rig) string {
	t.Helper()
	data, err := json.Marshal(r.Spec)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestStrategicMergePatch covers what kube-apiserver's smpPatcher does for
// a built-in type, on a kind whose patch strategies come from its OpenAPI
// definitions. Where a result is a list, its order is strategicpatch's.
func TestStrategicMergePatch(t *testing.T) {
	e := newRigEnv(t, true)
	base := rigsPath + "smp/rigs/"
	fresh := func(name string) *rig { return e.createRig("smp", name, rigSpecJSON) }
	// unchanged fails unless the rig name is as before.
	unchanged := func(t *testing.T, before *rig) {
		t.Helper()
		after := e.do("GET", base+before.Name, "", "").rig(t, http.StatusOK)
		if after.ResourceVersion != before.ResourceVersion || !reflect.DeepEqual(after.Spec, before.Spec) {
			t.Fatalf("a refused patch changed the object: %s %+v -> %s %+v", before.ResourceVersion, before.Spec, after.ResourceVersion, after.Spec)
		}
	}

	t.Run("lists merge by key or tag, atomic lists are replaced, maps merge", func(t *testing.T) {
		fresh("m")
		got := e.do("PATCH", base+"m", smpType, `{"spec":{"ports":[{"name":"b","port":91},{"name":"c","port":92}],`+
			`"tags":["y"],"volumes":[{"name":"v1","mounts":["m2"]}],"zones":["z3"],"params":{"q":"2","p":null}}}`).rig(t, http.StatusOK)
		want := `{"size":2,"ports":[{"name":"a","port":80},{"name":"b","port":91},{"name":"c","port":92}],"tags":["y","x"],` +
			`"volumes":[{"name":"v1","size":1,"mounts":["m2","m1"]}],"zones":["z3"],` +
			`"strategy":{"type":"Rolling","rolling":{"maxSurge":1}},"params":{"q":"2"}}`
		if s := specOf(t, got); s != want {
			t.Fatalf("spec\n got %s\nwant %s", s, want)
		}
		if got.Generation != 2 {
			t.Errorf("generation %d after a spec change", got.Generation)
		}
	})

	t.Run("directives", func(t *testing.T) {
		for _, tc := range []struct{ name, patch, want string }{
			{"$patch delete in a list", `{"spec":{"ports":[{"name":"a","$patch":"delete"}]}}`, `"ports":[{"name":"b","port":81}]`},
			{"$patch replace in a list", `{"spec":{"ports":[{"$patch":"replace"},{"name":"z","port":1}]}}`, `"ports":[{"name":"z","port":1}]`},
			{"$patch replace of a map", `{"spec":{"params":{"$patch":"replace","r":"3"}}}`, `"params":{"r":"3"}`},
			{"$patch delete of a map", `{"spec":{"strategy":{"$patch":"delete"}}}`, `"strategy":{}`},
			{"$deleteFromPrimitiveList", `{"spec":{"$deleteFromPrimitiveList/tags":["x"],"tags":["w"]}}`, `"tags":["w"]`},
			{"$setElementOrder", `{"spec":{"$setElementOrder/ports":[{"name":"b"},{"name":"a"}]}}`, `"ports":[{"name":"b","port":81},{"name":"a","port":80}]`},
			{"$retainKeys", `{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}}`, `"strategy":{"type":"Recreate"}`},
			{"$retainKeys in list elements", `{"spec":{"volumes":[{"name":"v1","$retainKeys":["name","mounts"],"mounts":["m3"]}]}}`, `"volumes":[{"name":"v1","mounts":["m3","m1"]}]`},
			{"null removes a field", `{"spec":{"zones":null,"size":null}}`, `"size":1,`}, // then defaulted
		} {
			t.Run(tc.name, func(t *testing.T) {
				name := strings.NewReplacer("$", "", " ", "-").Replace(strings.ToLower(tc.name))
				fresh(name)
				got := e.do("PATCH", base+name, smpType, tc.patch).rig(t, http.StatusOK)
				if s := specOf(t, got); !strings.Contains(s, tc.want) {
					t.Fatalf("spec %s lacks %s", s, tc.want)
				}
			})
		}
	})

	t.Run("bad patches are refused as kube-apiserver refuses them, and change nothing", func(t *testing.T) {
		before := fresh("bad")
		for _, tc := range []struct {
			patch  string
			code   int
			reason metav1.StatusReason
			msg    string
		}{
			// Decoding, on a patch that is valid JSON.
			{`[]`, 400, metav1.StatusReasonBadRequest, "json: cannot unmarshal array into Go value of type map[string]interface {}"},
			{`{"spec":`, 400, metav1.StatusReasonBadRequest, "invalid JSON patch"},
			// strategicpatch's classified errors.
			{`{"spec":{"$retainKeys":"type"}}`, 400, metav1.StatusReasonBadRequest, "invalid patch format of retainKeys"},
			{`{"spec":{"strategy":{"$retainKeys":["type"],"rolling":{}}}}`, 400, metav1.StatusReasonBadRequest, "invalid patch format of retainKeys"},
			{`{"spec":{"$deleteFromPrimitiveList":["x"]}}`, 400, metav1.StatusReasonBadRequest, "invalid patch format of primitive list"},
			{`{"spec":{"$setElementOrder/ports":"x"}}`, 500, "", "expected a []interface {}, but received a string"},
			{`{"spec":{"tags":[["x"]]}}`, 500, "", "list element types are not identical: [[x] [[x]]]"},
			// and the ones kube-apiserver answers with a reasonless 500.
			{`{"spec":{"ports":[{"port":1}]}}`, 500, "", "map: map[port:1] does not contain declared merge key: name"},
			{`{"spec":{"ports":[{"name":"a","$patch":"merge"}]}}`, 500, "", "merging lists cannot yet be specified in the patch"},
			{`{"spec":{"ports":[{"name":"a","$patch":"bogus"}]}}`, 500, "", "unknown patch type: bogus in map: map[$patch:bogus name:a]"},
			{`{"spec":{"$setElementOrder/bogus":[{"name":"a"}]}}`, 500, "", `unable to find api field in struct rigSpec for the json field "bogus"`},
			{`{"spec":{"$setElementOrder/size":[1]}}`, 500, "", "expected a []interface {}, but received a int64"},
			{`{"status":{"$setElementOrder/phase":["x"]}}`, 500, "", "expected slice or array type, but got: struct"},
			// The library panics comparing a merge key that is an object;
			// kube-apiserver resets the stream; here it is a 400.
			{`{"spec":{"ports":[{"name":{"x":1}}]}}`, 400, metav1.StatusReasonBadRequest, "invalid strategic merge patch: runtime error: comparing uncomparable type map[string]interface {}"},
			// Results that do not convert to the type: the schema refuses
			// them first, as a CRD's.
			{`{"spec":{"ports":{"name":"a"}}}`, 422, metav1.StatusReasonInvalid, `Rig.storagetest.apiloom.dev "bad" is invalid: spec.ports: Invalid value: "object": spec.ports in body must be of type array: "object"`},
			{`{"spec":{"size":"big"}}`, 422, metav1.StatusReasonInvalid, `Rig.storagetest.apiloom.dev "bad" is invalid: spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"`},
			// Then the checks of every write.
			{`{"metadata":{"name":"other"}}`, 400, metav1.StatusReasonBadRequest, "the name of the object (other) does not match the name on the URL (bad)"},
			{`{"spec":{"ports":[{"name":"a","port":-1}]}}`, 422, metav1.StatusReasonInvalid, ""},
		} {
			st := e.do("PATCH", base+"bad", smpType, tc.patch).wantStatus(t, tc.code, tc.reason, tc.msg)
			if tc.code == 500 && st.Details != nil {
				t.Errorf("%s: a 500 with details %+v; kube-apiserver has none", tc.patch, st.Details)
			}
		}
		unchanged(t, before)
	})

	t.Run("a missing object is 404 before the patch is decoded", func(t *testing.T) {
		e.do("PATCH", base+"ghost", smpType, `[]`).wantStatus(t, 404, metav1.StatusReasonNotFound, `rigs.storagetest.apiloom.dev "ghost" not found`)
	})

	t.Run("resourceVersion in the patch is a precondition", func(t *testing.T) {
		cur := fresh("rv")
		e.do("PATCH", base+"rv", smpType, `{"metadata":{"resourceVersion":"1"},"spec":{"size":3}}`).
			wantStatus(t, 409, metav1.StatusReasonConflict, `Operation cannot be fulfilled on rigs.storagetest.apiloom.dev "rv": the object has been modified; please apply your changes to the latest version and try again`)
		unchanged(t, cur)
		got := e.do("PATCH", base+"rv", smpType, `{"metadata":{"resourceVersion":"`+cur.ResourceVersion+`"},"spec":{"size":3}}`).rig(t, http.StatusOK)
		if got.Spec.Size != 3 {
			t.Fatalf("size %d", got.Spec.Size)
		}
	})

	t.Run("fieldValidation", func(t *testing.T) {
		before := fresh("fv")
		e.do("PATCH", base+"fv?fieldValidation=Strict", smpType, `{"spec":{"bogus":1,"size":3,"size":4}}`).wantStatus(t, 422, metav1.StatusReasonInvalid,
			` "" is invalid: patch: Invalid value: "map[spec:map[bogus:1 size:4]]": strict decoding error: duplicate field "spec.size", unknown field "spec.bogus"`)
		unchanged(t, before)
		r := e.do("PATCH", base+"fv", smpType, `{"spec":{"bogus":1,"size":3,"size":4}}`)
		if got := r.rig(t, http.StatusOK); got.Spec.Size != 4 {
			t.Fatalf("size %d", got.Spec.Size)
		}
		if w := r.header.Values("Warning"); !reflect.DeepEqual(w, []string{`299 - "duplicate field \"spec.size\""`, `299 - "unknown field \"spec.bogus\""`}) {
			t.Fatalf("warnings %q", w)
		}
		r = e.do("PATCH", base+"fv?fieldValidation=Ignore", smpType, `{"spec":{"bogus":1,"size":5}}`)
		if got := r.rig(t, http.StatusOK); got.Spec.Size != 5 || r.header.Get("Warning") != "" {
			t.Fatalf("size %d, warnings %q", got.Spec.Size, r.header.Values("Warning"))
		}
	})

	t.Run("apiVersion and kind in the patch are ignored", func(t *testing.T) {
		// kube-apiserver converts the result to the typed object, which
		// drops them (checked on a Deployment).
		fresh("kind")
		got := e.do("PATCH", base+"kind", smpType, `{"kind":"Other","apiVersion":"x/v9","spec":{"size":3}}`).rig(t, http.StatusOK)
		if got.Kind != "Rig" || got.APIVersion != "storagetest.apiloom.dev/v1" || got.Spec.Size != 3 {
			t.Fatalf("patched %s %s %+v", got.APIVersion, got.Kind, got.Spec)
		}
	})

	t.Run("dryRun stores nothing", func(t *testing.T) {
		before := fresh("dry")
		got := e.do("PATCH", base+"dry?dryRun=All", smpType, `{"spec":{"ports":[{"name":"c","port":1}]}}`).rig(t, http.StatusOK)
		if len(got.Spec.Ports) != 3 {
			t.Fatalf("dry run result %+v", got.Spec.Ports)
		}
		unchanged(t, before)
	})

	t.Run("status subresource", func(t *testing.T) {
		fresh("st")
		got := e.do("PATCH", base+"st/status", smpType, `{"status":{"phase":"Ready","ready":2},"spec":{"size":9}}`).rig(t, http.StatusOK)
		if got.Status.Phase != "Ready" || got.Status.Ready != 2 || got.Spec.Size != 2 || got.Generation != 1 {
			t.Fatalf("status patch: %+v %+v generation %d", got.Status, got.Spec, got.Generation)
		}
		got = e.do("PATCH", base+"st", smpType, `{"status":{"phase":"Gone"},"spec":{"size":3}}`).rig(t, http.StatusOK)
		if got.Status.Phase != "Ready" || got.Spec.Size != 3 {
			t.Fatalf("main patch: %+v %+v", got.Status, got.Spec)
		}
	})
}

// TestStrategicMergePatchByStructTags: a resource built without OpenAPI
// definitions merges by its struct tags alone, as kube-apiserver does for
// its built-in types; the +listType=map ports then are replaced.
func TestStrategicMergePatchByStructTags(t *testing.T) {
	e := newRigEnv(t, false)
	e.createRig("tags", "r", rigSpecJSON)
	got := e.do("PATCH", rigsPath+"tags/rigs/r", smpType, `{"spec":{"ports":[{"name":"c","port":92}],"tags":["y"],"volumes":[{"name":"v1","mounts":["m2"]}]}}`).rig(t, http.StatusOK)
	want := `{"size":2,"ports":[{"name":"c","port":92}],"tags":["y","x"],"volumes":[{"name":"v1","size":1,"mounts":["m2","m1"]}],`
	if s := specOf(t, got); !strings.HasPrefix(s, want) {
		t.Fatalf("spec\n got %s\nwant %s...", s, want)
	}
	e.do("PATCH", rigsPath+"tags/rigs/r", smpType, `{"spec":{"$setElementOrder/bogus":[1]}}`).
		wantStatus(t, 500, "", `unable to find api field in struct rigSpec for the json field "bogus"`)
}

// retryingStore runs every update's tryUpdate twice, the first result
// thrown away, as storage does when the object changed under an attempt.
type retryingStore struct {
	storage.Interface[*rig]
}

func (s retryingStore) GuaranteedUpdate(ctx context.Context, key string, pre *storage.Preconditions, tryUpdate func(*rig) (*rig, error)) (*rig, error) {
	return s.Interface.GuaranteedUpdate(ctx, key, pre, func(current *rig) (*rig, error) {
		if _, err := tryUpdate(copyObject(current)); err != nil {
			return nil, err
		}
		return tryUpdate(current)
	})
}

// TestStrategicPatchRetried: strategicpatch consumes the decoded patch
// (its directives are deleted as they are applied), so an attempt retried
// after a conflict must decode the patch again, or it would drop them.
func TestStrategicPatchRetried(t *testing.T) {
	e := newRigEnv(t, true)
	def := rigDefinition()
	h := NewHandler(NewResource(def, retryingStore{e.rigs}, WithSchemas(patch.NewSchemas(rigDefinitions))))
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	e.createRig("retry", "r", rigSpecJSON)
	e.srv = srv
	got := e.do("PATCH", rigsPath+"retry/rigs/r", smpType,
		`{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"},"$setElementOrder/ports":[{"name":"b"},{"name":"a"}]}}`).rig(t, http.StatusOK)
	if s := specOf(t, got); !strings.Contains(s, `"ports":[{"name":"b","port":81},{"name":"a","port":80}]`) || !strings.Contains(s, `"strategy":{"type":"Recreate"}`) {
		t.Fatalf("spec %s", s)
	}
}
