package endpoints

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// TestManagedFieldsOnWrites checks that every write records who changed
// what, as kube-apiserver v1.37 records it for the same requests (checked
// against a real one): the manager is fieldManager or the User-Agent's
// product, the operation Update, the subresource status for /status.
func TestManagedFieldsOnWrites(t *testing.T) {
	e := newEnv(t, false)
	base := widgetsPath + "mf/widgets/"
	ua := func(agent string) []string { return []string{"User-Agent", agent} }

	w := storagetest.NewWidget("", "w", "red")
	body, _ := json.Marshal(w)
	created := e.do("POST", strings.TrimSuffix(base, "/"), "application/json", string(body), ua("kubectl/v1.37.1 (linux/amd64) kubernetes/abc")...).widget(t, http.StatusCreated)
	en := entry(t, created, "kubectl")
	if en.Operation != metav1.ManagedFieldsOperationUpdate || en.Subresource != "" || en.Time == nil ||
		fieldsOf(en) != `{"f:spec":{"f:color":{},"f:size":{}}}` {
		t.Fatalf("create: %+v %s", en, fieldsOf(en))
	}

	t.Run("update", func(t *testing.T) {
		cur := e.do("GET", base+"w", "", "").widget(t, http.StatusOK)
		cur.Spec.Color = "blue"
		body, _ := json.Marshal(cur)
		got := e.do("PUT", base+"w?fieldManager=editor", "application/json", string(body), ua("ignored/1")...).widget(t, http.StatusOK)
		if fieldsOf(entry(t, got, "editor")) != `{"f:spec":{"f:color":{}}}` || fieldsOf(entry(t, got, "kubectl")) != `{"f:spec":{"f:size":{}}}` {
			t.Fatalf("update: %+v", got.ManagedFields)
		}
	})

	t.Run("merge and JSON patches", func(t *testing.T) {
		got := e.do("PATCH", base+"w", "application/merge-patch+json", `{"metadata":{"labels":{"a":"b"}}}`, ua("merger")...).widget(t, http.StatusOK)
		if fieldsOf(entry(t, got, "merger")) != `{"f:metadata":{"f:labels":{".":{},"f:a":{}}}}` {
			t.Fatalf("merge patch: %+v", got.ManagedFields)
		}
		got = e.do("PATCH", base+"w?fieldManager=jp", "application/json-patch+json", `[{"op":"replace","path":"/spec/size","value":7}]`).widget(t, http.StatusOK)
		if fieldsOf(entry(t, got, "jp")) != `{"f:spec":{"f:size":{}}}` {
			t.Fatalf("json patch: %+v", got.ManagedFields)
		}
		// A write without fieldManager or User-Agent is "unknown"'s.
		got = e.do("PATCH", base+"w", "application/merge-patch+json", `{"spec":{"size":8}}`, ua("")...).widget(t, http.StatusOK)
		if en := entry(t, got, "unknown"); en.Operation != metav1.ManagedFieldsOperationUpdate {
			t.Fatalf("anonymous: %+v", en)
		}
	})

	t.Run("status writes", func(t *testing.T) {
		got := e.do("PATCH", base+"w/status", "application/merge-patch+json", `{"status":{"phase":"Ready"},"spec":{"size":99}}`, ua("ctl/0.1")...).widget(t, http.StatusOK)
		en := entry(t, got, "ctl")
		if en.Subresource != "status" || fieldsOf(en) != `{"f:status":{"f:phase":{}}}` || got.Spec.Size != 8 {
			t.Fatalf("status patch: %+v %s", en, fieldsOf(en))
		}
		// Managed fields sent to /status are ignored: the subresource
		// cannot rewrite who owns the object.
		owners := len(got.ManagedFields)
		got.ManagedFields = []metav1.ManagedFieldsEntry{{}}
		got.Status.Phase = "Done"
		body, _ := json.Marshal(got)
		put := e.do("PUT", base+"w/status", "application/json", string(body), ua("ctl/0.1")...).widget(t, http.StatusOK)
		if put.Status.Phase != "Done" || len(put.ManagedFields) != owners || entry(t, put, "ctl").Subresource != "status" {
			t.Fatalf("status put: %+v", put.ManagedFields)
		}
	})

	t.Run("a client may write managed fields and clear them", func(t *testing.T) {
		cur := e.do("GET", base+"w", "", "").widget(t, http.StatusOK)
		mine := metav1.ManagedFieldsEntry{Manager: "mine", Operation: metav1.ManagedFieldsOperationApply, APIVersion: widgetAPI,
			FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:color":{}}}`)}}
		cur.ManagedFields = []metav1.ManagedFieldsEntry{mine}
		body, _ := json.Marshal(cur)
		got := e.do("PUT", base+"w", "application/json", string(body)).widget(t, http.StatusOK)
		if len(got.ManagedFields) != 1 || fieldsOf(entry(t, got, "mine")) != `{"f:spec":{"f:color":{}}}` {
			t.Fatalf("sent managed fields: %+v", got.ManagedFields)
		}
		// Entries that do not parse are ignored: the stored ones stay.
		bad := e.do("PATCH", base+"w", "application/merge-patch+json", `{"metadata":{"managedFields":[{"manager":"x","operation":"Bogus"}]}}`).widget(t, http.StatusOK)
		if bad.ResourceVersion != got.ResourceVersion || len(bad.ManagedFields) != 1 {
			t.Fatalf("unparsable managed fields: %+v", bad.ManagedFields)
		}
		cleared := e.do("PATCH", base+"w", "application/merge-patch+json", `{"metadata":{"managedFields":[{}]}}`).widget(t, http.StatusOK)
		if len(cleared.ManagedFields) != 0 {
			t.Fatalf("[{}] left %+v", cleared.ManagedFields)
		}
		// An object without managed fields stays untracked by updates until
		// the next apply.
		untracked := e.do("PATCH", base+"w", "application/merge-patch+json", `{"spec":{"size":3}}`).widget(t, http.StatusOK)
		if len(untracked.ManagedFields) != 0 {
			t.Fatalf("update tracked an untracked object: %+v", untracked.ManagedFields)
		}
	})

	t.Run("deleting an object with finalizers keeps them", func(t *testing.T) {
		fin := e.apply(base+"fin?fieldManager=alice", widgetYAML("fin", "metadata: {name: fin, finalizers: [example.com/x]}", "spec: {size: 1}")).widget(t, http.StatusCreated)
		marked := e.do("DELETE", base+"fin", "", "").widget(t, http.StatusOK)
		if marked.DeletionTimestamp == nil || len(marked.ManagedFields) != 1 || fieldsOf(entry(t, marked, "alice")) != fieldsOf(entry(t, fin, "alice")) {
			t.Fatalf("marked for deletion: %+v", marked.ObjectMeta)
		}
		// The apply that removes the finalizer deletes the object.
		done := e.apply(base+"fin?fieldManager=alice", widgetYAML("fin", "spec: {size: 1}")).widget(t, http.StatusOK)
		if len(done.Finalizers) != 0 {
			t.Fatalf("finalizers %v", done.Finalizers)
		}
		e.do("GET", base+"fin", "", "").wantStatus(t, 404, metav1.StatusReasonNotFound, "")
	})

	t.Run("update managers are capped at ten", func(t *testing.T) {
		e.apply(base+"cap?fieldManager=alice", widgetYAML("cap", "spec: {size: 1}")).widget(t, http.StatusCreated)
		var got *widget
		for i := range 12 {
			got = e.do("PATCH", base+"cap", "application/merge-patch+json", `{"metadata":{"labels":{"l`+string(rune('a'+i))+`":"v"}}}`,
				ua("m"+string(rune('a'+i))+"/1")...).widget(t, http.StatusOK)
		}
		var updates int
		for _, en := range got.ManagedFields {
			if en.Operation == metav1.ManagedFieldsOperationUpdate {
				updates++
			}
		}
		entry(t, got, "ancient-changes")
		if updates != 10 || len(got.Labels) != 12 {
			t.Fatalf("%d update entries, want 10: %+v", updates, got.ManagedFields)
		}
	})
}

// TestCreatorOwnsDefaults: a field the type's defaults fill is the
// creator's, as kube-apiserver's decoding defaults it before the field
// manager sees the object.
func TestCreatorOwnsDefaults(t *testing.T) {
	def := gadgetDefinition()
	def.Schema = gadgetSchema("nowhere")
	e := newEnvWith(t, false, def)
	r := e.do("POST", gadgetsPath+"?fieldManager=maker", "application/json", `{"metadata":{"name":"d"},"spec":{"ports":[80]}}`)
	var g gadget
	if err := json.Unmarshal(r.body, &g); err != nil || r.code != http.StatusCreated {
		t.Fatalf("create: %d %s", r.code, r.body)
	}
	if got := fieldsOf(entry(t, &g, "maker")); got != `{"f:spec":{"f:ports":{},"f:zone":{}}}` {
		t.Fatalf("maker owns %s", got)
	}
}

// TestTooLargeWithManagedFields: a create, update or patch whose object
// fits in storage only without its managed fields is stored without them,
// as kube-apiserver stores it (checked with a ConfigMap of 15,000 keys
// against etcd's 1.5 MiB); an apply, whose managed fields are the point,
// is refused.
func TestTooLargeWithManagedFields(t *testing.T) {
	root := etcdtest.Start(t)
	c := storagetest.NewClient(t, root, "/too-large")
	def := storagetest.Definition()
	// 40 labels with long keys: about 3.3 KB stored, and their managed
	// fields, which repeat each key, as much again.
	labels := map[string]string{}
	for i := range 40 {
		labels[fmt.Sprintf("example.com/a-rather-long-label-key-to-make-this-big-%03d", i)] = "v"
	}
	store := storage.New(c, storage.ResourcePrefix("/registry", &def.Info), def, storage.WithMaxRequestBytes(5000))
	srv := httptest.NewServer(NewHandler(NewResource(def, store, WithTypeConverter(testTypeConverter(t)))))
	t.Cleanup(srv.Close)
	e := &env{t: t, ctx: t.Context(), srv: srv}
	base := widgetsPath + "big/widgets"

	big := func(name string) string {
		w := storagetest.NewWidget("", name, "red")
		w.Labels = labels
		body, _ := json.Marshal(w)
		return string(body)
	}
	created := e.do("POST", base, "application/json", big("w")).widget(t, http.StatusCreated)
	if len(created.ManagedFields) != 0 || len(created.Labels) != 40 {
		t.Fatalf("created with %d managed fields entries, %d labels", len(created.ManagedFields), len(created.Labels))
	}
	e.apply(base+"/w?fieldManager=a&force=true", widgetYAML("w", "spec: {size: 2}")).wantStatus(t, 413, metav1.StatusReasonRequestEntityTooLarge, "")

	// Objects that grow too large with their managed fields.
	for _, name := range []string{"p", "u"} {
		small := e.createWidget("big", name, "red")
		if len(small.ManagedFields) != 1 {
			t.Fatalf("small object: %+v", small.ManagedFields)
		}
		var got *widget
		if name == "p" {
			labelsJSON, _ := json.Marshal(labels)
			got = e.do("PATCH", base+"/p", "application/merge-patch+json", `{"metadata":{"labels":`+string(labelsJSON)+`}}`).widget(t, http.StatusOK)
		} else {
			small.Labels = labels
			got = e.put(base+"/u", small).widget(t, http.StatusOK)
		}
		if len(got.Labels) != 40 || len(got.ManagedFields) != 0 {
			t.Fatalf("%s: %d labels, managed fields %+v", name, len(got.Labels), got.ManagedFields)
		}
	}
	// A small object keeps its managed fields.
	small := e.apply(base+"/s?fieldManager=a", widgetYAML("s", "spec: {size: 2}")).widget(t, http.StatusCreated)
	if len(small.ManagedFields) != 1 {
		t.Fatalf("small object: %+v", small.ManagedFields)
	}
}
