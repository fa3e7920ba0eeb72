package endpoints

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sadmission "k8s.io/apiserver/pkg/admission"

	"github.com/apiloom/apiloom/server/admission"
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

// denyDeleteOf refuses the deletion of the object named name.
type denyDeleteOf struct{ name string }

func (denyDeleteOf) Handles(op k8sadmission.Operation) bool { return op == k8sadmission.Delete }

func (d denyDeleteOf) Validate(_ context.Context, a k8sadmission.Attributes, _ k8sadmission.ObjectInterfaces) error {
	if a.GetName() == d.name {
		return apierrors.NewForbidden(a.GetResource().GroupResource(), a.GetName(), errors.New("not this one"))
	}
	return nil
}

// TestDeleteCollectionWorkersFailure: as kube-apiserver's store, the
// worker whose delete fails stops and the others delete everything else,
// so with one worker the objects after the failing one stay, and with
// four only the failing one; the answer is its failure either way.
func TestDeleteCollectionWorkersFailure(t *testing.T) {
	const n, bad = 300, 150
	badName := fmt.Sprintf("w-%03d", bad)
	for _, c := range []struct{ workers, left int }{{1, n - bad}, {4, 1}} {
		t.Run(fmt.Sprintf("workers=%d", c.workers), func(t *testing.T) {
			l := request.DefaultLimits()
			l.DeleteCollectionWorkers = c.workers
			chain := admission.New(admission.ServerPlugins{}).With(admission.Plugin{Name: "DenyOne", Interface: denyDeleteOf{badName}})
			e := newEnvDefs(t, false, validatedWidgets(storagetest.Definition()), gadgetDefinition(), WithLimits(l), WithAdmission(chain))
			for i := range n {
				e.createWidget("dc", fmt.Sprintf("w-%03d", i), "red")
			}
			r := e.do("DELETE", widgetsPath+"dc/widgets", "", "")
			if st := r.status(t); r.code != http.StatusForbidden || st.Details == nil || st.Details.Name != badName {
				t.Fatalf("deletecollection: %d %s", r.code, r.body)
			}
			var list struct {
				Items []widget `json:"items"`
			}
			decodeJSON(t, e.do("GET", widgetsPath+"dc/widgets", "", "").body, &list)
			if len(list.Items) != c.left || list.Items[0].Name != badName {
				t.Fatalf("%d widgets left (first %s), want %d from %s", len(list.Items), list.Items[0].Name, c.left, badName)
			}
		})
	}
}
