package endpoints

import (
	"encoding/json"
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDelete(t *testing.T) {
	e := newEnv(t, false)
	base := widgetsPath + "delete/widgets/"

	t.Run("returns the deleted object", func(t *testing.T) {
		w := e.createWidget("delete", "a", "red")
		got := e.do("DELETE", base+"a", "", "").widget(t, http.StatusOK)
		if got.UID != w.UID || got.ResourceVersion == w.ResourceVersion {
			t.Fatalf("deleted %+v", got.ObjectMeta)
		}
		e.do("GET", base+"a", "", "").wantStatus(t, 404, metav1.StatusReasonNotFound, "")
		e.do("DELETE", base+"a", "", "").wantStatus(t, 404, metav1.StatusReasonNotFound, `widgets.storagetest.apiloom.dev "a" not found`)
	})

	t.Run("preconditions", func(t *testing.T) {
		w := e.createWidget("delete", "pre", "red")
		e.do("DELETE", base+"pre", "application/json", `{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":"nope"}}`).
			wantStatus(t, 409, metav1.StatusReasonConflict,
				`Operation cannot be fulfilled on Widget.storagetest.apiloom.dev "pre": the UID in the precondition (nope) does not match the UID in record (`+string(w.UID)+`). The object might have been deleted and then recreated`)
		body, _ := json.Marshal(metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &w.UID, ResourceVersion: &w.ResourceVersion}})
		e.do("DELETE", base+"pre", "application/json", string(body)).widget(t, http.StatusOK)
	})

	t.Run("options validation", func(t *testing.T) {
		e.createWidget("delete", "opt", "red")
		e.do("DELETE", base+"opt?propagationPolicy=Sideways", "", "").wantStatus(t, 422, metav1.StatusReasonInvalid, "")
		e.do("DELETE", base+"opt", "application/json", `{"propagationPolicy":"Sideways"}`).wantStatus(t, 422, metav1.StatusReasonInvalid, "")
		e.do("DELETE", base+"opt?dryRun=Maybe", "", "").wantStatus(t, 422, metav1.StatusReasonInvalid, "")
		e.do("DELETE", base+"opt", "application/json", `{"kind":"Status"}`).wantStatus(t, 400, metav1.StatusReasonBadRequest, "decoded object cannot be converted to DeleteOptions")
		e.do("DELETE", base+"opt", "application/json", `{"gracePeriodSeconds":`).wantStatus(t, 400, metav1.StatusReasonBadRequest, "")
		e.do("DELETE", base+"opt?gracePeriodSeconds=soon", "", "").wantStatus(t, 400, metav1.StatusReasonBadRequest, "")
		e.do("GET", base+"opt", "", "").widget(t, http.StatusOK)
		// A body with a group's own DeleteOptions, as old clients send.
		e.do("DELETE", base+"opt", "application/json", `{"kind":"DeleteOptions","apiVersion":"storagetest.apiloom.dev/v1","propagationPolicy":"Foreground"}`).widget(t, http.StatusOK)
	})

	t.Run("dryRun", func(t *testing.T) {
		e.createWidget("delete", "dry", "red")
		e.do("DELETE", base+"dry?dryRun=All", "", "").widget(t, http.StatusOK)
		e.do("GET", base+"dry", "", "").widget(t, http.StatusOK)
	})

	t.Run("finalizers", func(t *testing.T) {
		w := e.createWidget("delete", "fin", "red")
		w.Finalizers = []string{"example.com/cleanup"}
		w = e.put(base+"fin", w).widget(t, http.StatusOK)

		marked := e.do("DELETE", base+"fin", "", "").widget(t, http.StatusOK)
		if marked.DeletionTimestamp == nil || marked.DeletionGracePeriodSeconds == nil || *marked.DeletionGracePeriodSeconds != 0 || marked.Generation != w.Generation+1 {
			t.Fatalf("marked %+v", marked.ObjectMeta)
		}
		again := e.do("DELETE", base+"fin", "", "").widget(t, http.StatusOK)
		if !again.DeletionTimestamp.Equal(marked.DeletionTimestamp) {
			t.Fatalf("second delete moved deletionTimestamp: %v -> %v", marked.DeletionTimestamp, again.DeletionTimestamp)
		}
		// Adding a finalizer to an object being deleted is refused.
		again.Finalizers = append(again.Finalizers, "example.com/more")
		e.put(base+"fin", again).wantStatus(t, 422, metav1.StatusReasonInvalid, "")

		// Removing the last finalizer deletes it.
		done := e.do("PATCH", base+"fin", "application/merge-patch+json", `{"metadata":{"finalizers":null}}`).widget(t, http.StatusOK)
		if len(done.Finalizers) != 0 {
			t.Fatalf("final update %+v", done.ObjectMeta)
		}
		e.do("GET", base+"fin", "", "").wantStatus(t, 404, metav1.StatusReasonNotFound, "")
	})
}

func TestDeleteCollection(t *testing.T) {
	e := newEnv(t, false)
	for _, n := range []string{"a", "b", "c"} {
		e.createWidget("dc", n, "red", "app", "x")
	}
	e.createWidget("dc", "keep", "red", "app", "y")
	e.createWidget("dc-other", "a", "red", "app", "x")

	r := e.do("DELETE", widgetsPath+"dc/widgets?labelSelector=app%3Dx", "", "")
	var list struct {
		Kind     string          `json:"kind"`
		Metadata metav1.ListMeta `json:"metadata"`
		Items    []widget        `json:"items"`
	}
	decodeJSON(t, r.body, &list)
	if r.code != 200 || list.Kind != "WidgetList" || len(list.Items) != 3 || list.Metadata.ResourceVersion == "" {
		t.Fatalf("%d %s", r.code, r.body)
	}
	r = e.do("GET", widgetsPath+"dc/widgets", "", "")
	decodeJSON(t, r.body, &list)
	if len(list.Items) != 1 || list.Items[0].Name != "keep" {
		t.Fatalf("left %s", r.body)
	}
	e.do("GET", widgetsPath+"dc-other/widgets/a", "", "").widget(t, http.StatusOK)

	// dryRun deletes nothing; all namespaces at once works too.
	e.do("DELETE", "/apis/storagetest.apiloom.dev/v1/widgets?dryRun=All", "", "")
	r = e.do("GET", "/apis/storagetest.apiloom.dev/v1/widgets", "", "")
	decodeJSON(t, r.body, &list)
	if len(list.Items) != 2 {
		t.Fatalf("after dry run %s", r.body)
	}
	r = e.do("DELETE", "/apis/storagetest.apiloom.dev/v1/widgets", "", "")
	decodeJSON(t, r.body, &list)
	if r.code != 200 || len(list.Items) != 2 {
		t.Fatalf("%d %s", r.code, r.body)
	}
	e.do("DELETE", widgetsPath+"dc/widgets?resourceVersionMatch=Exact", "", "").wantStatus(t, 422, metav1.StatusReasonInvalid, "")
}
