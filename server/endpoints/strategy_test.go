package endpoints

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// builtInStrategy is the strategy of most built-in kinds (a ConfigMap's,
// a Namespace's), as builtin/apis.yaml states it.
var builtInStrategy = resource.Strategy{UnconditionalUpdate: true, UntrackedGeneration: true, StatusUpdatesMetadata: true}

// newStrategyEnv serves Widgets with strategy (served as a built-in kind's
// when builtIn) and Gadgets as a custom resource.
func newStrategyEnv(t *testing.T, strategy resource.Strategy, builtIn bool) *env {
	t.Helper()
	wdef := validatedWidgets(storagetest.Definition())
	wdef.Strategy, wdef.BuiltIn = strategy, builtIn
	return newEnvDefs(t, false, wdef, gadgetDefinition())
}

// TestUnconditionalUpdate: a PUT without resourceVersion is 422 for a custom
// resource (and a Lease) and writes over the stored object for a kind whose
// strategy allows it (a ConfigMap, a Secret: Helm's release records).
func TestUnconditionalUpdate(t *testing.T) {
	put := func(e *env, path string) response {
		return e.do("PUT", path, "application/json", `{"apiVersion":"`+widgetAPI+`","kind":"Widget","metadata":{"name":"a"},"spec":{"color":"green"},"status":{"phase":"Up"}}`)
	}
	path := widgetsPath + "ns/widgets/a"

	cr := newStrategyEnv(t, resource.Strategy{}, false)
	cr.createWidget("ns", "a", "red")
	cr.do("PUT", path, "application/json", `{"apiVersion":"`+widgetAPI+`","kind":"Widget","metadata":{"name":"a"},"spec":{"color":"green"}}`).
		wantStatus(t, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
			`widgets.storagetest.apiloom.dev "a" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`)

	e := newStrategyEnv(t, resource.Strategy{UnconditionalUpdate: true}, true)
	before := e.createWidget("ns", "a", "red")
	e.createWidget("ns", "b", "red")
	got := put(e, path).widget(t, http.StatusOK)
	if got.Spec.Color != "green" || got.ResourceVersion == before.ResourceVersion || got.UID != before.UID {
		t.Fatalf("unconditional PUT stored %+v over %+v", got, before)
	}
	// Of the status too, which takes only the status.
	st := put(e, path+"/status").widget(t, http.StatusOK)
	if st.Status.Phase != "Up" || st.ResourceVersion == got.ResourceVersion {
		t.Fatalf("unconditional PUT of /status stored %+v", st)
	}
	// A stale resourceVersion is still a conflict.
	e.do("PUT", path, "application/json", `{"apiVersion":"`+widgetAPI+`","kind":"Widget","metadata":{"name":"a","resourceVersion":"`+before.ResourceVersion+`"}}`).
		wantStatus(t, http.StatusConflict, metav1.StatusReasonConflict, "")
}

// TestUntrackedGeneration: a custom resource's generation is 1 on create
// and moves with its spec; a built-in kind's is what the client sent and
// stays, as kube-apiserver leaves it to strategies that set none.
func TestUntrackedGeneration(t *testing.T) {
	create := `{"apiVersion":"` + widgetAPI + `","kind":"Widget","metadata":{"name":"a","generation":7},"spec":{"color":"red"}}`
	patch := `{"spec":{"color":"blue"}}`
	path := widgetsPath + "ns/widgets"
	for _, c := range []struct {
		name                string
		strategy            resource.Strategy
		created, afterPatch int64
	}{
		{"custom resource", resource.Strategy{}, 1, 2},
		{"untracked", resource.Strategy{UntrackedGeneration: true}, 7, 7},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newStrategyEnv(t, c.strategy, c.strategy != resource.Strategy{})
			if g := e.do("POST", path, "application/json", create).widget(t, http.StatusCreated).Generation; g != c.created {
				t.Errorf("created with generation %d, want %d", g, c.created)
			}
			if g := e.do("PATCH", path+"/a", "application/merge-patch+json", patch).widget(t, http.StatusOK).Generation; g != c.afterPatch {
				t.Errorf("generation after a spec change %d, want %d", g, c.afterPatch)
			}
		})
	}
}

// TestStatusUpdatesMetadata: a status write of a custom resource changes only
// the status; a Namespace's keeps the metadata it carries too.
func TestStatusUpdatesMetadata(t *testing.T) {
	patch := `{"metadata":{"annotations":{"a":"b"},"labels":{"l":"v"}},"spec":{"color":"blue"},"status":{"phase":"Up"}}`
	for _, c := range []struct {
		name     string
		strategy resource.Strategy
		keeps    bool
	}{
		{"custom resource", resource.Strategy{}, false},
		{"status strategy keeps metadata", resource.Strategy{StatusUpdatesMetadata: true}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newStrategyEnv(t, c.strategy, c.keeps)
			e.createWidget("ns", "a", "red")
			got := e.do("PATCH", widgetsPath+"ns/widgets/a/status", "application/merge-patch+json", patch).widget(t, http.StatusOK)
			if got.Status.Phase != "Up" || got.Spec.Color != "red" {
				t.Fatalf("status write stored spec %+v, status %+v", got.Spec, got.Status)
			}
			if kept := got.Annotations["a"] == "b" && got.Labels["l"] == "v"; kept != c.keeps {
				t.Errorf("annotations %v, labels %v: kept %v, want %v", got.Annotations, got.Labels, kept, c.keeps)
			}
			// The metadata rules hold for what a status write keeps.
			bad := e.do("PATCH", widgetsPath+"ns/widgets/a/status", "application/merge-patch+json", `{"metadata":{"labels":{"no spaces":"v"}}}`)
			if c.keeps {
				bad.wantStatus(t, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "")
			} else if bad.code != http.StatusOK {
				t.Errorf("ignored bad label: %d %s", bad.code, bad.body)
			}
		})
	}
}

// TestStatusWriterOwnsMetadata: the metadata a status write keeps is
// credited to its writer, in the managed fields entry of the status
// subresource, as kube-apiserver credits a Namespace's; a custom
// resource's status writer owns only status.
func TestStatusWriterOwnsMetadata(t *testing.T) {
	patch := `{"metadata":{"annotations":{"a":"b"},"labels":{"l":"v"}},"status":{"phase":"Up"}}`
	for _, keeps := range []bool{false, true} {
		e := newStrategyEnv(t, resource.Strategy{StatusUpdatesMetadata: keeps}, keeps)
		e.createWidget("ns", "a", "red")
		got := e.do("PATCH", widgetsPath+"ns/widgets/a/status?fieldManager=st", "application/merge-patch+json", patch).widget(t, http.StatusOK)
		var entry *metav1.ManagedFieldsEntry
		for i, m := range got.ManagedFields {
			if m.Manager == "st" {
				entry = &got.ManagedFields[i]
			}
		}
		if entry == nil || entry.Subresource != "status" || entry.FieldsV1 == nil {
			t.Fatalf("keeps %v: no status entry of st in %+v", keeps, got.ManagedFields)
		}
		var fields map[string]any
		if err := json.Unmarshal(entry.FieldsV1.Raw, &fields); err != nil {
			t.Fatal(err)
		}
		if _, ok := fields["f:status"]; !ok {
			t.Errorf("keeps %v: st does not own status: %s", keeps, entry.FieldsV1.Raw)
		}
		want := map[string]any{"f:annotations": map[string]any{".": map[string]any{}, "f:a": map[string]any{}}, "f:labels": map[string]any{".": map[string]any{}, "f:l": map[string]any{}}}
		if meta, ok := fields["f:metadata"]; keeps && !reflect.DeepEqual(meta, want) || !keeps && ok {
			t.Errorf("keeps %v: st owns metadata %v", keeps, meta)
		}
	}
}

// TestValidateStatus: a kind's status rules (Definition.ValidateStatus)
// hold every write to its status subresource, with the stored object as
// old, and refuse it with one 422 naming the cause; writes to the object
// are not held to them, as upstream's status strategy ValidateUpdate
// (a Namespace's phase) is not its main strategy's.
func TestValidateStatus(t *testing.T) {
	wdef := validatedWidgets(storagetest.Definition())
	wdef.Strategy, wdef.BuiltIn = builtInStrategy, true
	var olds []string
	wdef.ValidateStatus = func(obj, old *widget) field.ErrorList {
		olds = append(olds, old.Status.Phase)
		if obj.Status.Phase == "Bad" {
			return field.ErrorList{field.Invalid(field.NewPath("status", "phase"), obj.Status.Phase, "may not be bad")}
		}
		return nil
	}
	e := newEnvDefs(t, false, wdef, gadgetDefinition())
	e.createWidget("ns", "a", "red")
	path := widgetsPath + "ns/widgets/a/status"
	e.do("PATCH", path, "application/merge-patch+json", `{"status":{"phase":"Up"}}`).widget(t, http.StatusOK)
	for _, w := range []struct{ method, query, ctype, body string }{
		{"PATCH", "", "application/merge-patch+json", `{"status":{"phase":"Bad"}}`},
		{"PUT", "", "application/json", `{"apiVersion":"` + widgetAPI + `","kind":"Widget","metadata":{"name":"a"},"status":{"phase":"Bad"}}`},
		{"PATCH", "?fieldManager=m&force=true", "application/apply-patch+yaml", `{"apiVersion":"` + widgetAPI + `","kind":"Widget","metadata":{"name":"a"},"status":{"phase":"Bad"}}`},
	} {
		e.do(w.method, path+w.query, w.ctype, w.body).wantStatus(t, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
			`Widget.storagetest.apiloom.dev "a" is invalid: status.phase: Invalid value: "Bad": may not be bad`)
	}
	if got := e.do("GET", widgetsPath+"ns/widgets/a", "", "").widget(t, http.StatusOK); got.Status.Phase != "Up" {
		t.Errorf("refused status writes stored phase %q", got.Status.Phase)
	}
	if want := []string{"", "Up", "Up", "Up"}; !reflect.DeepEqual(olds, want) {
		t.Errorf("ValidateStatus saw stored phases %q, want %q", olds, want)
	}
	// A write to the object does not run the status rules.
	olds = nil
	e.do("PATCH", widgetsPath+"ns/widgets/a", "application/merge-patch+json", `{"spec":{"color":"blue"}}`).widget(t, http.StatusOK)
	if olds != nil {
		t.Errorf("a write to the object ran the status rules")
	}
}

// TestListItemsTyped: the items of a custom resource's list carry kind and
// apiVersion; a built-in kind's do not, whether they come from the watch
// cache's frames or are encoded for the request.
func TestListItemsTyped(t *testing.T) {
	for _, builtIn := range []bool{false, true} {
		e := newStrategyEnv(t, resource.Strategy{}, builtIn)
		e.createWidget("ns", "a", "red")
		e.createWidget("ns", "b", "red")
		for _, accept := range []string{"application/json", "application/yaml"} {
			resp := e.do("GET", widgetsPath+"ns/widgets", "", "", "Accept", accept)
			if resp.code != http.StatusOK {
				t.Fatalf("list: %d %s", resp.code, resp.body)
			}
			body := string(resp.body)
			if !strings.Contains(body, "WidgetList") {
				t.Fatalf("no list kind: %s", body)
			}
			if n := strings.Count(body, `"kind":"Widget"`) + strings.Count(body, "kind: Widget\n"); (n == 2) != !builtIn || (n == 0) != builtIn {
				t.Errorf("built-in %v, %s: %d items carry their kind: %s", builtIn, accept, n, body)
			}
		}
		// In CBOR, "Widget" (0x46 and its six bytes, as apimachinery encodes strings) is an item's kind.
		cbor := e.do("GET", widgetsPath+"ns/widgets", "", "", "Accept", "application/cbor")
		if n := bytes.Count(cbor.body, []byte("\x46Widget")); cbor.code != http.StatusOK || (n == 2) != !builtIn || (n == 0) != builtIn {
			t.Errorf("built-in %v, CBOR: %d %d items carry their kind", builtIn, cbor.code, n)
		}
		var list struct {
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(e.do("GET", widgetsPath+"ns/widgets", "", "").body, &list); err != nil || len(list.Items) != 2 {
			t.Fatalf("list: %v %d items", err, len(list.Items))
		}
		var item widget
		if err := json.Unmarshal(list.Items[0], &item); err != nil || item.Name != "a" || item.Spec.Color != "red" {
			t.Errorf("built-in %v: item %s decodes to %+v, %v", builtIn, list.Items[0], item, err)
		}
		// A single object always carries its kind.
		e.do("GET", widgetsPath+"ns/widgets/a", "", "").widget(t, http.StatusOK)
	}
}

// TestDeleteAnswersStatus: a DELETE that removes an object answers it for a
// custom resource and a Success Status naming it for a kind whose store
// says so (a ConfigMap's); one that only marks it answers the object
// either way. A failed precondition is kube-apiserver's 409, naming the kind.
func TestDeleteAnswersStatus(t *testing.T) {
	for _, status := range []bool{false, true} {
		e := newStrategyEnv(t, resource.Strategy{DeleteAnswersStatus: status}, status)
		w := e.createWidget("ns", "a", "red")
		path := widgetsPath + "ns/widgets/a"

		e.do("DELETE", path, "application/json", `{"preconditions":{"uid":"nope"}}`).wantStatus(t, http.StatusConflict, metav1.StatusReasonConflict,
			`Operation cannot be fulfilled on Widget.storagetest.apiloom.dev "a": the UID in the precondition (nope) does not match the UID in record (`+string(w.UID)+`). The object might have been deleted and then recreated`)
		e.do("DELETE", path, "application/json", `{"preconditions":{"resourceVersion":"1"}}`).wantStatus(t, http.StatusConflict, metav1.StatusReasonConflict,
			`Operation cannot be fulfilled on Widget.storagetest.apiloom.dev "a": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (`+w.ResourceVersion+`). The object might have been modified`)

		// Held by a finalizer: marked, and answered as it is.
		e.do("PATCH", path, "application/merge-patch+json", `{"metadata":{"finalizers":["example.com/hold"]}}`).widget(t, http.StatusOK)
		marked := e.do("DELETE", path, "", "").widget(t, http.StatusOK)
		if marked.DeletionTimestamp == nil {
			t.Fatalf("status %v: marked %+v", status, marked)
		}
		b := e.createWidget("ns", "b", "red")
		resp := e.do("DELETE", widgetsPath+"ns/widgets/b", "", "")
		if !status {
			resp.widget(t, http.StatusOK)
			continue
		}
		var st metav1.Status
		if err := json.Unmarshal(resp.body, &st); err != nil || resp.code != http.StatusOK || st.Kind != "Status" || st.Status != metav1.StatusSuccess || st.Code != 0 ||
			!reflect.DeepEqual(st.Details, &metav1.StatusDetails{Name: "b", Group: "storagetest.apiloom.dev", Kind: "widgets", UID: b.UID}) {
			t.Errorf("DELETE answered %d %s", resp.code, resp.body)
		}
	}
}

// TestUnknownFieldLabel: a field selector on a field the kind cannot select
// by is 400 in the words of the field-label conversion kube-apiserver uses
// for it: a CR's and a kind's with fields of its own, or apimachinery's
// default for a built-in kind with none (a ConfigMap's).
func TestUnknownFieldLabel(t *testing.T) {
	for _, builtIn := range []bool{false, true} {
		gdef := gadgetDefinition()
		gdef.BuiltIn = builtIn
		wdef := validatedWidgets(storagetest.Definition())
		wdef.BuiltIn = builtIn
		e := newEnvDefs(t, false, wdef, gdef)
		want := "field label not supported: spec.zone"
		if builtIn {
			want = `"spec.zone" is not a known field selector: only "metadata.name", "metadata.namespace"`
		}
		e.do("GET", gadgetsPath+"?fieldSelector=spec.zone%3Dx", "", "").wantStatus(t, http.StatusBadRequest, metav1.StatusReasonBadRequest, want)
		// Widgets select by spec.color: their own conversion's words.
		e.do("GET", widgetsPath+"ns/widgets?fieldSelector=spec.size%3D1", "", "").wantStatus(t, http.StatusBadRequest, metav1.StatusReasonBadRequest, "field label not supported: spec.size")
	}
}
