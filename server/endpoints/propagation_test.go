package endpoints

import (
	"net/http"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	orphanFinalizer     = metav1.FinalizerOrphanDependents
	foregroundFinalizer = metav1.FinalizerDeleteDependents
)

// TestDeletePropagation: a DELETE's propagation policy becomes the
// garbage-collection finalizer kube-apiserver's generic store sets, and a
// later DELETE of an object being deleted changes it as upstream does.
func TestDeletePropagation(t *testing.T) {
	e := newEnv(t, false)
	base := widgetsPath + "gc/widgets/"
	wantFinalizers := func(t *testing.T, w *widget, want ...string) {
		t.Helper()
		if !slices.Equal(w.Finalizers, want) {
			t.Fatalf("finalizers %q, want %q", w.Finalizers, want)
		}
	}
	marked := func(t *testing.T, w *widget, want ...string) {
		t.Helper()
		wantFinalizers(t, w, want...)
		if w.DeletionTimestamp == nil || w.DeletionGracePeriodSeconds == nil || *w.DeletionGracePeriodSeconds != 0 {
			t.Fatalf("not marked deleting: %+v", w.ObjectMeta)
		}
	}

	for _, c := range []struct {
		name, query, body string
		want              string
	}{
		{"orphan in the query", "?propagationPolicy=Orphan", "", orphanFinalizer},
		{"orphan in the body", "", `{"propagationPolicy":"Orphan"}`, orphanFinalizer},
		{"orphanDependents", "?orphanDependents=true", "", orphanFinalizer},
		{"orphanDependents in the body", "", `{"orphanDependents":true}`, orphanFinalizer},
		{"foreground", "?propagationPolicy=Foreground", "", foregroundFinalizer},
		{"foreground in the body", "", `{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Foreground"}`, foregroundFinalizer},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.createWidget("gc", "p", "red")
			ct := ""
			if c.body != "" {
				ct = "application/json"
			}
			marked(t, e.do("DELETE", base+"p"+c.query, ct, c.body).widget(t, http.StatusOK), c.want)
			marked(t, e.do("GET", base+"p", "", "").widget(t, http.StatusOK), c.want)
			// Background removes it, and with it the last finalizer.
			e.do("DELETE", base+"p?propagationPolicy=Background", "", "").widget(t, http.StatusOK)
			e.do("GET", base+"p", "", "").wantStatus(t, 404, metav1.StatusReasonNotFound, "")
		})
	}

	t.Run("background and no policy delete at once", func(t *testing.T) {
		for _, q := range []string{"?propagationPolicy=Background", "", "?orphanDependents=false"} {
			e.createWidget("gc", "b", "red")
			e.do("DELETE", base+"b"+q, "", "").widget(t, http.StatusOK)
			e.do("GET", base+"b", "", "").wantStatus(t, 404, metav1.StatusReasonNotFound, "")
		}
	})

	t.Run("a later delete changes the policy", func(t *testing.T) {
		w := e.createWidget("gc", "later", "red")
		w.Finalizers = []string{"example.com/keep"}
		e.put(base+"later", w).widget(t, http.StatusOK)

		first := e.do("DELETE", base+"later?propagationPolicy=Foreground", "", "").widget(t, http.StatusOK)
		marked(t, first, "example.com/keep", foregroundFinalizer)
		// No policy: the finalizer the object has decides; nothing moves.
		again := e.do("DELETE", base+"later", "", "").widget(t, http.StatusOK)
		marked(t, again, "example.com/keep", foregroundFinalizer)
		if !again.DeletionTimestamp.Equal(first.DeletionTimestamp) {
			t.Fatalf("deletionTimestamp moved: %v -> %v", first.DeletionTimestamp, again.DeletionTimestamp)
		}
		// Orphan replaces foreground; the deletion keeps its timestamp.
		orphan := e.do("DELETE", base+"later?propagationPolicy=Orphan", "", "").widget(t, http.StatusOK)
		marked(t, orphan, "example.com/keep", orphanFinalizer)
		if !orphan.DeletionTimestamp.Equal(first.DeletionTimestamp) || orphan.Generation != first.Generation {
			t.Fatalf("re-marked: %+v after %+v", orphan.ObjectMeta, first.ObjectMeta)
		}
		// orphanDependents=false removes the orphan finalizer.
		marked(t, e.do("DELETE", base+"later?orphanDependents=false", "", "").widget(t, http.StatusOK), "example.com/keep")
		// Background with another finalizer left: still only marked.
		marked(t, e.do("DELETE", base+"later?propagationPolicy=Foreground", "", "").widget(t, http.StatusOK), "example.com/keep", foregroundFinalizer)
		marked(t, e.do("DELETE", base+"later?propagationPolicy=Background", "", "").widget(t, http.StatusOK), "example.com/keep")
		e.do("PATCH", base+"later", "application/merge-patch+json", `{"metadata":{"finalizers":null}}`).widget(t, http.StatusOK)
		e.do("GET", base+"later", "", "").wantStatus(t, 404, metav1.StatusReasonNotFound, "")
	})

	t.Run("dryRun", func(t *testing.T) {
		e.createWidget("gc", "dry", "red")
		marked(t, e.do("DELETE", base+"dry?dryRun=All&propagationPolicy=Orphan", "", "").widget(t, http.StatusOK), orphanFinalizer)
		got := e.do("GET", base+"dry", "", "").widget(t, http.StatusOK)
		wantFinalizers(t, got)
		if got.DeletionTimestamp != nil {
			t.Fatalf("dry run marked it: %+v", got.ObjectMeta)
		}
		// Dry-run Background of an object being orphaned: deleted as stored.
		e.do("DELETE", base+"dry?propagationPolicy=Orphan", "", "").widget(t, http.StatusOK)
		dry := e.do("DELETE", base+"dry?dryRun=All&propagationPolicy=Background", "", "").widget(t, http.StatusOK)
		marked(t, dry, orphanFinalizer)
		marked(t, e.do("GET", base+"dry", "", "").widget(t, http.StatusOK), orphanFinalizer)
		e.do("DELETE", base+"dry?propagationPolicy=Background", "", "").widget(t, http.StatusOK)
	})

	t.Run("deletecollection", func(t *testing.T) {
		for _, n := range []string{"c1", "c2"} {
			e.createWidget("gc-dc", n, "red")
		}
		if r := e.do("DELETE", widgetsPath+"gc-dc/widgets?propagationPolicy=Foreground", "", ""); r.code != 200 {
			t.Fatalf("%d %s", r.code, r.body)
		}
		for _, n := range []string{"c1", "c2"} {
			marked(t, e.do("GET", widgetsPath+"gc-dc/widgets/"+n, "", "").widget(t, http.StatusOK), foregroundFinalizer)
		}
	})

	t.Run("validation", func(t *testing.T) {
		e.createWidget("gc", "bad", "red")
		e.do("DELETE", base+"bad?orphanDependents=true&propagationPolicy=Orphan", "", "").wantStatus(t, 422, metav1.StatusReasonInvalid,
			`DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set`)
		e.do("DELETE", base+"bad", "application/json", `{"orphanDependents":false,"propagationPolicy":"Background"}`).wantStatus(t, 422, metav1.StatusReasonInvalid, "")
		e.do("DELETE", base+"bad?propagationPolicy=orphan", "", "").wantStatus(t, 422, metav1.StatusReasonInvalid,
			`DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "orphan": supported values: "Foreground", "Background", "Orphan", "nil"`)
		got := e.do("GET", base+"bad", "", "").widget(t, http.StatusOK)
		if got.DeletionTimestamp != nil || len(got.Finalizers) != 0 {
			t.Fatalf("refused delete changed %+v", got.ObjectMeta)
		}
	})
}
