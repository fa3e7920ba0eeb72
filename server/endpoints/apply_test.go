package endpoints

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Every expectation below is what kube-apiserver v1.37 answers for the same
// request to a CustomResourceDefinition with the same schema (checked
// against a real one, see docs/server-side-apply.md), unless it says
// otherwise.

const mediaApply = "application/apply-patch+yaml"

// apply sends body as a server-side apply to path (which carries the query).
func (e *env) apply(path, body string, headers ...string) response {
	e.t.Helper()
	return e.do("PATCH", path, mediaApply, body, headers...)
}

// widgetYAML is an apply configuration of the Widget name with the given
// YAML lines after its metadata.
func widgetYAML(name string, lines ...string) string {
	return "apiVersion: storagetest.apiloom.dev/v1\nkind: Widget\nmetadata: {name: " + name + "}\n" + strings.Join(lines, "\n")
}

// entry returns obj's managed fields entry of manager, failing if there is
// not exactly one.
func entry(t *testing.T, obj metav1.Object, manager string) metav1.ManagedFieldsEntry {
	t.Helper()
	var found []metav1.ManagedFieldsEntry
	for _, e := range obj.GetManagedFields() {
		if e.Manager == manager {
			found = append(found, e)
		}
	}
	if len(found) != 1 {
		t.Fatalf("managed fields of %q: %d entries, want 1: %+v", manager, len(found), obj.GetManagedFields())
	}
	return found[0]
}

// fieldsOf is the FieldsV1 of an entry as JSON.
func fieldsOf(e metav1.ManagedFieldsEntry) string {
	if e.FieldsV1 == nil {
		return ""
	}
	return string(e.FieldsV1.Raw)
}

func TestApply(t *testing.T) {
	e := newEnv(t, false)
	base := widgetsPath + "apply/widgets/"

	t.Run("apply to a missing object creates it", func(t *testing.T) {
		got := e.apply(base+"a?fieldManager=alice", widgetYAML("a", "metadata: {name: a, labels: {team: x}}", "spec: {size: 3}")).widget(t, http.StatusCreated)
		if got.Spec.Size != 3 || got.Labels["team"] != "x" || got.UID == "" || got.Generation != 1 || got.Namespace != "apply" {
			t.Fatalf("created %+v", got)
		}
		en := entry(t, got, "alice")
		if en.Operation != metav1.ManagedFieldsOperationApply || en.APIVersion != widgetAPI || en.Time == nil || en.Subresource != "" ||
			fieldsOf(en) != `{"f:metadata":{"f:labels":{"f:team":{}}},"f:spec":{"f:size":{}}}` {
			t.Fatalf("entry %+v %s", en, fieldsOf(en))
		}
		if stored := e.do("GET", base+"a", "", "").widget(t, http.StatusOK); stored.ResourceVersion != got.ResourceVersion || len(stored.ManagedFields) != 1 {
			t.Fatalf("stored %+v", stored.ObjectMeta)
		}
	})

	t.Run("conflicts are 409 with a cause per field, force takes over", func(t *testing.T) {
		e.apply(base+"c?fieldManager=alice", widgetYAML("c", "spec: {size: 1, color: red}")).widget(t, http.StatusCreated)
		st := e.apply(base+"c?fieldManager=bob", widgetYAML("c", "spec: {size: 2, color: blue}")).wantStatus(t, 409, metav1.StatusReasonConflict,
			"Apply failed with 2 conflicts: conflicts with \"alice\":\n- .spec.color\n- .spec.size")
		want := []metav1.StatusCause{
			{Type: metav1.CauseTypeFieldManagerConflict, Message: `conflict with "alice"`, Field: ".spec.color"},
			{Type: metav1.CauseTypeFieldManagerConflict, Message: `conflict with "alice"`, Field: ".spec.size"},
		}
		if st.Details == nil || !slices.Equal(st.Details.Causes, want) {
			t.Fatalf("causes %+v", st.Details)
		}
		// Applying the value already there is sharing the field, not a conflict.
		shared := e.apply(base+"c?fieldManager=bob", widgetYAML("c", "spec: {size: 1}")).widget(t, http.StatusOK)
		if fieldsOf(entry(t, shared, "bob")) != `{"f:spec":{"f:size":{}}}` || fieldsOf(entry(t, shared, "alice")) != `{"f:spec":{"f:color":{},"f:size":{}}}` {
			t.Fatalf("shared %+v", shared.ManagedFields)
		}
		got := e.apply(base+"c?fieldManager=bob&force=true", widgetYAML("c", "spec: {size: 2, color: blue}")).widget(t, http.StatusOK)
		if got.Spec.Size != 2 || got.Spec.Color != "blue" || got.Generation != 2 {
			t.Fatalf("forced %+v", got)
		}
		if fieldsOf(entry(t, got, "bob")) != `{"f:spec":{"f:color":{},"f:size":{}}}` {
			t.Fatalf("bob owns %s", fieldsOf(entry(t, got, "bob")))
		}
		for _, en := range got.ManagedFields {
			if en.Manager == "alice" {
				t.Fatalf("alice still owns %s after losing every field", fieldsOf(en))
			}
		}
	})

	t.Run("a field the applier stops applying is removed unless another manager owns it", func(t *testing.T) {
		e.apply(base+"r?fieldManager=alice", widgetYAML("r", "spec: {size: 1, color: red}")).widget(t, http.StatusCreated)
		got := e.apply(base+"r?fieldManager=alice", widgetYAML("r", "spec: {size: 1}")).widget(t, http.StatusOK)
		if got.Spec.Color != "" {
			t.Fatalf("color kept: %+v", got.Spec)
		}
	})

	t.Run("the main resource never owns status, /status owns nothing else", func(t *testing.T) {
		// As kube-apiserver's reset fields for an object with a status
		// subresource: status in an apply to the object is dropped and not
		// owned; spec and metadata in an apply to /status likewise.
		got := e.apply(base+"s?fieldManager=alice", widgetYAML("s", "spec: {size: 1}", "status: {phase: Hacked}")).widget(t, http.StatusCreated)
		if got.Status.Phase != "" || fieldsOf(entry(t, got, "alice")) != `{"f:spec":{"f:size":{}}}` {
			t.Fatalf("created %+v %s", got.Status, fieldsOf(entry(t, got, "alice")))
		}
		got = e.apply(base+"s/status?fieldManager=ctl", widgetYAML("s", "metadata: {name: s, labels: {x: z}}", "spec: {size: 9}", "status: {phase: Ready}")).widget(t, http.StatusOK)
		if got.Status.Phase != "Ready" || got.Spec.Size != 1 || got.Labels["x"] != "" || got.Generation != 1 {
			t.Fatalf("status apply wrote %+v", got)
		}
		en := entry(t, got, "ctl")
		if en.Subresource != "status" || en.Operation != metav1.ManagedFieldsOperationApply || fieldsOf(en) != `{"f:status":{"f:phase":{}}}` {
			t.Fatalf("ctl entry %+v %s", en, fieldsOf(en))
		}
		// Through /status a missing object is 404: only the object's
		// endpoint creates.
		e.apply(base+"ghost/status?fieldManager=ctl", widgetYAML("ghost", "status: {phase: Ready}")).
			wantStatus(t, 404, metav1.StatusReasonNotFound, `widgets.storagetest.apiloom.dev "ghost" not found`)
	})

	t.Run("an apply that changes nothing stores nothing", func(t *testing.T) {
		// The configuration carries a status, which the object's endpoint
		// drops: the merge changes the object, so the field manager stamps
		// alice's entry with the time, but what is left to store differs
		// from the stored object by that stamp alone, and kube-apiserver
		// (IgnoreManagedFieldsTimestampsTransformer) then writes nothing: no
		// new resourceVersion, no watch event. To see the stamp move
		// whatever the clock, the entry is first given an old time, with a
		// label change so that that write is not itself timestamps only.
		cfg := widgetYAML("same", "spec: {size: 4}", "status: {phase: Ready}")
		e.apply(base+"same?fieldManager=alice", cfg).widget(t, http.StatusCreated)
		old := `{"manager":"alice","operation":"Apply","apiVersion":"` + widgetAPI + `","time":"2020-01-01T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:size":{}}}}`
		first := e.do("PATCH", base+"same", "application/merge-patch+json", `{"metadata":{"labels":{"k":"v"},"managedFields":[`+old+`]}}`).widget(t, http.StatusOK)
		if tm := entry(t, first, "alice").Time; tm == nil || tm.Year() != 2020 {
			t.Fatalf("managed fields a client sent were not kept: %+v", first.ManagedFields)
		}
		again := e.apply(base+"same?fieldManager=alice", cfg).widget(t, http.StatusOK)
		if again.ResourceVersion != first.ResourceVersion || entry(t, again, "alice").Time.Year() != 2020 {
			t.Fatalf("no-op apply wrote: rv %s -> %s, managed fields %+v", first.ResourceVersion, again.ResourceVersion, again.ManagedFields)
		}
		changed := e.apply(base+"same?fieldManager=alice", widgetYAML("same", "spec: {size: 5}")).widget(t, http.StatusOK)
		if changed.ResourceVersion == first.ResourceVersion || entry(t, changed, "alice").Time.Year() == 2020 {
			t.Fatalf("apply that changes the object: rv %s, managed fields %+v", changed.ResourceVersion, changed.ManagedFields)
		}
	})

	t.Run("dryRun=All stores nothing", func(t *testing.T) {
		got := e.apply(base+"dry?fieldManager=alice&dryRun=All", widgetYAML("dry", "spec: {size: 4}")).widget(t, http.StatusCreated)
		if got.Spec.Size != 4 || len(got.ManagedFields) != 1 {
			t.Fatalf("dry run answered %+v", got)
		}
		e.do("GET", base+"dry", "", "").wantStatus(t, 404, metav1.StatusReasonNotFound, "")
		cur := e.apply(base+"dry?fieldManager=alice", widgetYAML("dry", "spec: {size: 4}")).widget(t, http.StatusCreated)
		upd := e.apply(base+"dry?fieldManager=alice&dryRun=All", widgetYAML("dry", "spec: {size: 5}")).widget(t, http.StatusOK)
		if upd.Spec.Size != 5 {
			t.Fatalf("dry run answered %+v", upd.Spec)
		}
		if after := e.do("GET", base+"dry", "", "").widget(t, http.StatusOK); after.ResourceVersion != cur.ResourceVersion || after.Spec.Size != 4 {
			t.Fatalf("dry run stored %+v", after)
		}
	})

	t.Run("resourceVersion in the configuration is a precondition", func(t *testing.T) {
		cur := e.apply(base+"rv?fieldManager=alice", widgetYAML("rv", "spec: {size: 1}")).widget(t, http.StatusCreated)
		e.apply(base+"rv?fieldManager=alice", widgetYAML("rv", "metadata: {name: rv, resourceVersion: \"1\"}", "spec: {size: 2}")).
			wantStatus(t, 409, metav1.StatusReasonConflict, `Operation cannot be fulfilled on widgets.storagetest.apiloom.dev "rv": the object has been modified; please apply your changes to the latest version and try again`)
		e.apply(base+"rv?fieldManager=alice", widgetYAML("rv", "metadata: {name: rv, resourceVersion: \""+cur.ResourceVersion+"\"}", "spec: {size: 2}")).widget(t, http.StatusOK)
		// On a missing object it is ignored, as kube-apiserver's create
		// through update ignores it.
		e.apply(base+"rv2?fieldManager=alice", widgetYAML("rv2", "metadata: {name: rv2, resourceVersion: \"5\"}", "spec: {size: 2}")).widget(t, http.StatusCreated)
	})

	t.Run("JSON bodies are YAML too", func(t *testing.T) {
		got := e.apply(base+"j?fieldManager=alice", `{"apiVersion":"storagetest.apiloom.dev/v1","kind":"Widget","metadata":{"name":"j"},"spec":{"color":"red"}}`).widget(t, http.StatusCreated)
		if got.Spec.Color != "red" {
			t.Fatalf("created %+v", got.Spec)
		}
	})

	t.Run("duplicate fields follow fieldValidation", func(t *testing.T) {
		e.apply(base+"d?fieldManager=alice", widgetYAML("d", "spec: {size: 1}")).widget(t, http.StatusCreated)
		r := e.apply(base+"d?fieldManager=alice", widgetYAML("d", "spec: {size: 2, size: 3}"))
		if got := r.widget(t, http.StatusOK); got.Spec.Size != 3 || !slices.Equal(r.header.Values("Warning"), []string{`299 - "line 4: key \"size\" already set in map"`}) {
			t.Fatalf("warn: size %d, warnings %q", got.Spec.Size, r.header.Values("Warning"))
		}
		r = e.apply(base+"d?fieldManager=alice&fieldValidation=Ignore", widgetYAML("d", "spec: {size: 4, size: 5}"))
		if got := r.widget(t, http.StatusOK); got.Spec.Size != 5 || len(r.header.Values("Warning")) != 0 {
			t.Fatalf("ignore: size %d, warnings %q", got.Spec.Size, r.header.Values("Warning"))
		}
		e.apply(base+"d?fieldManager=alice&fieldValidation=Strict", widgetYAML("d", "spec: {size: 6, size: 7}")).wantStatus(t, 400, metav1.StatusReasonBadRequest,
			"error strict decoding patch: error converting YAML to JSON: yaml: unmarshal errors:\n  line 4: key \"size\" already set in map")
		// An apply refused after the merge still carries the warnings.
		r = e.apply(base+"d?fieldManager=alice", widgetYAML("d", "metadata: {name: d, resourceVersion: \"1\"}", "spec: {size: 8, size: 9}"))
		r.wantStatus(t, 409, metav1.StatusReasonConflict, "")
		if w := r.header.Values("Warning"); !slices.Equal(w, []string{`299 - "line 4: key \"metadata\" already set in map"`, `299 - "line 5: key \"size\" already set in map"`}) {
			t.Fatalf("warnings of a refused apply: %q", w)
		}
	})
}

// TestApplyBadInput sends what cannot be applied: each is answered as
// kube-apiserver answers it, and nothing is stored.
func TestApplyBadInput(t *testing.T) {
	e := newEnv(t, false)
	base := widgetsPath + "bad/widgets/"
	cur := e.apply(base+"w?fieldManager=alice", widgetYAML("w", "spec: {size: 1}")).widget(t, http.StatusCreated)
	const gvk = "storagetest.apiloom.dev/v1, Kind=Widget"

	for _, tc := range []struct {
		name, path, body string
		code             int
		reason           metav1.StatusReason
		msg              string
	}{
		{"no fieldManager", "w", widgetYAML("w"), 422, metav1.StatusReasonInvalid,
			`PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch`},
		{"not YAML", "w?fieldManager=a", "a: [", 400, metav1.StatusReasonBadRequest,
			"error encoding patch: yaml: line 1: did not find expected node content"},
		{"not JSON", "w?fieldManager=a", "{{{", 400, metav1.StatusReasonBadRequest,
			"error decoding patch: error converting YAML to JSON: yaml: line 1: did not find expected node content"},
		{"a list", "w?fieldManager=a", "[]", 400, metav1.StatusReasonBadRequest,
			"error decoding patch: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type map[string]interface {}"},
		{"a string", "w?fieldManager=a", `"x"`, 400, metav1.StatusReasonBadRequest,
			"error decoding patch: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal string into Go value of type map[string]interface {}"},
		{"null", "w?fieldManager=a", "null", 400, metav1.StatusReasonBadRequest, "invalid object type: /, Kind="},
		{"empty", "w?fieldManager=a", "", 400, metav1.StatusReasonBadRequest, "invalid object type: /, Kind="},
		{"another version", "w?fieldManager=a", "apiVersion: storagetest.apiloom.dev/v2\nkind: Widget\nmetadata: {name: w}", 400, metav1.StatusReasonBadRequest,
			"invalid object type: storagetest.apiloom.dev/v2, Kind=Widget"},
		{"another kind", "w?fieldManager=a", "apiVersion: storagetest.apiloom.dev/v1\nkind: Gadget\nmetadata: {name: w}", 400, metav1.StatusReasonBadRequest,
			"invalid object type: storagetest.apiloom.dev/v1, Kind=Gadget"},
		{"no kind", "w?fieldManager=a", "apiVersion: storagetest.apiloom.dev/v1\nmetadata: {name: w}", 400, metav1.StatusReasonBadRequest,
			"invalid object type: storagetest.apiloom.dev/v1, Kind="},
		{"another name", "w?fieldManager=a", widgetYAML("x"), 400, metav1.StatusReasonBadRequest,
			"the name of the object (x) does not match the name on the URL (w)"},
		{"another namespace", "w?fieldManager=a", widgetYAML("w", "metadata: {name: w, namespace: other}"), 400, metav1.StatusReasonBadRequest,
			"the namespace of the provided object does not match the namespace sent on the request"},
		{"managedFields", "w?fieldManager=a", widgetYAML("w", "metadata: {name: w, managedFields: []}"), 400, metav1.StatusReasonBadRequest,
			"metadata.managedFields must be nil"},
		// kube-apiserver answers a field the schema lacks, or a value of
		// the wrong type, with a 500 that has no reason; so does apiloom.
		{"unknown field", "w?fieldManager=a", widgetYAML("w", "spec: {bogus: 1}"), 500, "",
			"failed to create typed patch object (/w; " + gvk + "): .spec.bogus: field not declared in schema"},
		{"wrong type", "w?fieldManager=a", widgetYAML("w", "spec: {size: big}"), 500, "",
			"failed to create typed patch object (/w; " + gvk + "): .spec.size: expected numeric (int or float), got string"},
		{"a uid on a missing object", "m?fieldManager=a", widgetYAML("m", "metadata: {name: m, uid: abc}"), 409, metav1.StatusReasonConflict,
			`Operation cannot be fulfilled on widgets.storagetest.apiloom.dev "m": uid mismatch: the provided object specified uid abc, and no existing object was found`},
		{"no name on a missing object", "m?fieldManager=a", "apiVersion: storagetest.apiloom.dev/v1\nkind: Widget\nspec: {size: 1}", 400, metav1.StatusReasonBadRequest,
			"the name of the object (m based on URL) was undeterminable: name must be provided"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.apply(base+tc.path, tc.body).wantStatus(t, tc.code, tc.reason, tc.msg)
		})
	}
	t.Run("force is for apply only", func(t *testing.T) {
		e.do("PATCH", base+"w?force=true", "application/merge-patch+json", `{}`).wantStatus(t, 422, metav1.StatusReasonInvalid,
			`PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch`)
	})
	t.Run("nothing was stored", func(t *testing.T) {
		if got := e.do("GET", base+"w", "", "").widget(t, http.StatusOK); got.ResourceVersion != cur.ResourceVersion {
			t.Fatalf("a refused apply wrote: %s -> %s", cur.ResourceVersion, got.ResourceVersion)
		}
		e.do("GET", base+"m", "", "").wantStatus(t, 404, metav1.StatusReasonNotFound, "")
	})
}

// TestApplyListTypes merges Gadget's tags, a +listType=set, and its ports,
// an atomic list, as structured-merge-diff merges them for kube-apiserver.
func TestApplyListTypes(t *testing.T) {
	e := newEnv(t, false)
	cfg := func(lines ...string) string {
		return "apiVersion: storagetest.apiloom.dev/v1\nkind: Gadget\nmetadata: {name: g}\n" + strings.Join(lines, "\n")
	}
	decode := func(r response, code int) *gadget {
		t.Helper()
		if r.code != code {
			t.Fatalf("got %d, want %d: %s", r.code, code, r.body)
		}
		var g gadget
		if err := json.Unmarshal(r.body, &g); err != nil {
			t.Fatal(err)
		}
		return &g
	}
	decode(e.apply(gadgetsPath+"/g?fieldManager=a", cfg("spec: {tags: [red, blue], ports: [1, 2]}")), http.StatusCreated)
	// b adds to the set and shares blue; a list that is atomic belongs to
	// its last applier as a whole, and applying another is a conflict.
	e.apply(gadgetsPath+"/g?fieldManager=b", cfg("spec: {ports: [3]}")).wantStatus(t, 409, metav1.StatusReasonConflict,
		"Apply failed with 1 conflict: conflict with \"a\": .spec.ports")
	g := decode(e.apply(gadgetsPath+"/g?fieldManager=b", cfg("spec: {tags: [green, blue]}")), http.StatusOK)
	if !slices.Equal(g.Spec.Tags, []string{"red", "green", "blue"}) {
		t.Fatalf("tags %v", g.Spec.Tags)
	}
	// a stops applying red and blue: red goes, blue stays (b owns it too).
	g = decode(e.apply(gadgetsPath+"/g?fieldManager=a", cfg("spec: {ports: [1, 2]}")), http.StatusOK)
	if !slices.Equal(g.Spec.Tags, []string{"green", "blue"}) || !slices.Equal(g.Spec.Ports, []int32{1, 2}) {
		t.Fatalf("after a dropped its tags: %+v", g.Spec)
	}
	g = decode(e.apply(gadgetsPath+"/g?fieldManager=b&force=true", cfg("spec: {ports: [3]}")), http.StatusOK)
	if !slices.Equal(g.Spec.Ports, []int32{3}) {
		t.Fatalf("ports %v", g.Spec.Ports)
	}
}
