package endpoints

import (
	"context"
	"errors"
	"net/http/httptest"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// refuser is a WriteAdmission refusing, with 403, any object labelled
// deny=yes, and recording whether each call was a create.
type refuser struct {
	mu      sync.Mutex // guards creates
	creates []bool
}

func (r *refuser) Admit(_ context.Context, obj, old runtime.Object) error {
	r.mu.Lock()
	r.creates = append(r.creates, old == nil)
	r.mu.Unlock()
	w := obj.(*widget)
	if old != nil && old.(*widget).Name != w.Name {
		return apierrors.NewInternalError(nil)
	}
	if w.Labels["deny"] == "yes" {
		return apierrors.NewForbidden(schema.GroupResource{Group: "g", Resource: "widgets"}, w.Name, errRefused)
	}
	return nil
}

var errRefused = errors.New("refused")

// TestWriteAdmission: every write path (create, dryRun create, update,
// merge patch, server-side apply creating and updating) reaches the
// resource's WriteAdmission with the object to store and the stored one,
// and its APIStatus is the answer, nothing being stored.
func TestWriteAdmission(t *testing.T) {
	root := etcdtest.Start(t)
	c := storagetest.NewClient(t, root, "/wa-test")
	def := storagetest.Definition()
	store := storage.New(c, storage.ResourcePrefix("/registry", &def.Info), def)
	r := &refuser{}
	srv := httptest.NewServer(NewHandler(NewResource(def, store, WithTypeConverter(testTypeConverter(t)), WithWriteAdmission(r))))
	t.Cleanup(srv.Close)
	e := &env{t: t, ctx: t.Context(), srv: srv}
	base := widgetsPath + "wa/widgets"
	deny := `{"metadata":{"name":"a","labels":{"deny":"yes"}}}`

	e.do("POST", base, "application/json", deny).wantStatus(t, 403, metav1.StatusReasonForbidden, `widgets.g "a" is forbidden: refused`)
	e.do("POST", base+"?dryRun=All", "application/json", deny).wantStatus(t, 403, metav1.StatusReasonForbidden, "")
	e.do("PATCH", base+"/a?fieldManager=m", mediaApply, `{"apiVersion":"storagetest.apiloom.dev/v1","kind":"Widget","metadata":{"name":"a","labels":{"deny":"yes"}}}`).
		wantStatus(t, 403, metav1.StatusReasonForbidden, "")
	if got := e.do("GET", base+"/a", "", ""); got.code != 404 {
		t.Fatalf("refused creates stored a: %d %s", got.code, got.body)
	}
	if got := e.do("POST", base, "application/json", `{"metadata":{"name":"a"}}`); got.code != 201 {
		t.Fatalf("create: %d %s", got.code, got.body)
	}
	e.do("PATCH", base+"/a", "application/merge-patch+json", `{"metadata":{"labels":{"deny":"yes"}}}`).wantStatus(t, 403, metav1.StatusReasonForbidden, "")
	e.do("PATCH", base+"/a?fieldManager=m", mediaApply, `{"apiVersion":"storagetest.apiloom.dev/v1","kind":"Widget","metadata":{"name":"a","labels":{"deny":"yes"}}}`).
		wantStatus(t, 403, metav1.StatusReasonForbidden, "")
	got := e.do("GET", base+"/a", "", "")
	var w widget
	decodeJSON(t, got.body, &w)
	body := `{"metadata":{"name":"a","resourceVersion":"` + w.ResourceVersion + `","labels":{"deny":"yes"}}}`
	e.do("PUT", base+"/a", "application/json", body).wantStatus(t, 403, metav1.StatusReasonForbidden, "")
	e.do("PUT", base+"/a?dryRun=All", "application/json", body).wantStatus(t, 403, metav1.StatusReasonForbidden, "")
	decodeJSON(t, e.do("GET", base+"/a", "", "").body, &w)
	if w.Labels["deny"] != "" {
		t.Fatalf("a refused update was stored: %v", w.Labels)
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	want := []bool{true, true, true, true, false, false, false, false}
	if len(r.creates) != len(want) {
		t.Fatalf("admission calls (create?) %v, want %v", r.creates, want)
	}
	for i := range want {
		if r.creates[i] != want[i] {
			t.Fatalf("admission calls (create?) %v, want %v", r.creates, want)
		}
	}
}
