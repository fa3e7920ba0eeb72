package e2e

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	crdconfv1 "github.com/apiloom/apiloom/apis/crdconf/v1"
	"github.com/apiloom/apiloom/generated/apiserver"
	gencrdconf "github.com/apiloom/apiloom/generated/apiserver/crdconf/v1"
	"github.com/apiloom/apiloom/generated/clientset/versioned"
	"github.com/apiloom/apiloom/server/hook"
	"github.com/apiloom/apiloom/server/registry"
	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/testserver"
)

// TestHooksCannotSetServerFields: a create's hooks run before the server
// sets what it owns, as kube-apiserver's mutating admission runs before
// its strategy: a hook's uid, creationTimestamp, generation and deletion
// fields are not stored.
func TestHooksCannotSetServerFields(t *testing.T) {
	hookTime := metav1.NewTime(time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC))
	install := func(r *registry.Registry) {
		all := &registry.Registry{}
		apiserver.Install(all)
		widget := *gencrdconf.Widget
		widget.Hooks = &hook.Hooks[*crdconfv1.Widget]{
			PrepareForCreate: func(_ *hook.Request, w *crdconfv1.Widget) {
				w.UID = types.UID("set-by-a-hook")
				w.CreationTimestamp = hookTime
				w.Generation = 7
				w.DeletionTimestamp = &hookTime
				w.DeletionGracePeriodSeconds = new(int64)
			},
		}
		*r = *all.Select(func(i *resource.Info) bool { return i.GroupResource() != widget.GroupResource() })
		registry.Register(r, &widget)
	}
	ts := testserver.Start(t, install)
	ts.CreateNamespaces(t, "owned")
	owner := "o"
	w, err := versioned.NewForConfigOrDie(ts.Config).CrdconfV1().Widgets("owned").Create(t.Context(), &crdconfv1.Widget{
		ObjectMeta: metav1.ObjectMeta{Name: "w"},
		Spec:       crdconfv1.WidgetSpec{Engine: "postgres", Owner: &owner},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w.UID == "set-by-a-hook" || w.UID == "" || w.CreationTimestamp.Equal(&hookTime) || w.Generation != 1 ||
		w.DeletionTimestamp != nil || w.DeletionGracePeriodSeconds != nil {
		t.Errorf("stored the hook's server fields: uid %q, creationTimestamp %v, generation %d, deletionTimestamp %v, grace %v",
			w.UID, w.CreationTimestamp, w.Generation, w.DeletionTimestamp, w.DeletionGracePeriodSeconds)
	}
}
