package endpoints

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/endpoints/request"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// TestDeleteCollectionWorkers: with one worker (the default) and with
// several, a deletecollection deletes every object its label selector
// picks (more than a page of the workers' buffer) and nothing else, marks
// those with finalizers, and answers the first failure as kube-apiserver:
// a UID precondition holds for one object only, so the others are 409 and
// stay.
func TestDeleteCollectionWorkers(t *testing.T) {
	for _, workers := range []int{1, 4} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			l := request.DefaultLimits()
			l.DeleteCollectionWorkers = workers
			e := newEnvDefs(t, false, validatedWidgets(storagetest.Definition()), gadgetDefinition(), WithLimits(l))
			const n = 300
			base := widgetsPath + "dc/widgets"
			for i := range n {
				e.createWidget("dc", fmt.Sprintf("w-%03d", i), "red", "app", "x")
			}
			for i := range 5 {
				e.createWidget("dc", fmt.Sprintf("keep-%d", i), "red", "app", "y")
			}
			held := e.createWidget("dc", "held", "red", "app", "x")
			held.Finalizers = []string{"example.com/hold"}
			e.put(base+"/held", held).widget(t, http.StatusOK)

			var list struct {
				Items []widget `json:"items"`
			}
			r := e.do("DELETE", base+"?labelSelector="+url.QueryEscape("app=x"), "", "")
			decodeJSON(t, r.body, &list)
			if r.code != http.StatusOK || len(list.Items) != n+1 {
				t.Fatalf("deletecollection: %d, %d items", r.code, len(list.Items))
			}
			decodeJSON(t, e.do("GET", base, "", "").body, &list)
			if len(list.Items) != 6 {
				t.Fatalf("%d widgets left, want the 5 app=y and the held one", len(list.Items))
			}
			for _, w := range list.Items {
				if w.Labels["app"] == "x" && (w.Name != "held" || w.DeletionTimestamp == nil) {
					t.Errorf("left %s, deletionTimestamp %v", w.Name, w.DeletionTimestamp)
				}
			}

			// A failure: only the first object meets the precondition.
			var first *widget
			for i := range n {
				w := e.createWidget("pre", fmt.Sprintf("w-%03d", i), "red")
				if first == nil {
					first = w
				}
			}
			body := fmt.Sprintf(`{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":%q}}`, first.UID)
			r = e.do("DELETE", widgetsPath+"pre/widgets", "application/json", body)
			st := r.status(t)
			if r.code != http.StatusConflict || st.Reason != metav1.StatusReasonConflict || st.Details == nil || st.Details.Name == "" || st.Details.Name == first.Name {
				t.Fatalf("deletecollection with a precondition: %d %s", r.code, r.body)
			}
			e.do("GET", widgetsPath+"pre/widgets/"+first.Name, "", "").wantStatus(t, http.StatusNotFound, metav1.StatusReasonNotFound, "")
			decodeJSON(t, e.do("GET", widgetsPath+"pre/widgets", "", "").body, &list)
			if len(list.Items) != n-1 {
				t.Fatalf("%d widgets left after the failed deletecollection, want %d", len(list.Items), n-1)
			}
		})
	}
}
