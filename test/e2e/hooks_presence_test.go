package e2e

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	crdconfv1 "github.com/apiloom/apiloom/apis/crdconf/v1"
	"github.com/apiloom/apiloom/generated/apiserver"
	gencrdconf "github.com/apiloom/apiloom/generated/apiserver/crdconf/v1"
	"github.com/apiloom/apiloom/server/hook"
	"github.com/apiloom/apiloom/server/registry"
	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/testserver"
)

// TestHooksKeepRequiredFieldsRequired: a kind with a Default hook still
// refuses a create, an update and an apply that leave a required field
// out (spec.engine, a string without omitempty, which the Go object holds
// as ""), with the CRD's "Required value"; a field the hook sets counts as
// written.
func TestHooksKeepRequiredFieldsRequired(t *testing.T) {
	install := func(r *registry.Registry) {
		all := &registry.Registry{}
		apiserver.Install(all)
		widget := *gencrdconf.Widget
		widget.Hooks = &hook.Hooks[*crdconfv1.Widget]{
			Default: func(_ *hook.Request, w *crdconfv1.Widget) {
				if w.Labels["default-engine"] == "yes" {
					w.Spec.Engine = "mysql"
				}
			},
		}
		*r = *all.Select(func(i *resource.Info) bool { return i.GroupResource() != widget.GroupResource() })
		registry.Register(r, &widget)
	}
	ts := testserver.Start(t, install)
	ts.CreateNamespaces(t, "presence")
	widgets := dynamic.NewForConfigOrDie(ts.Config).Resource(schema.GroupVersionResource{
		Group: "crdconf.apiloom.dev", Version: "v1", Resource: "widgets"}).Namespace("presence")
	ctx := t.Context()
	widget := func(name string, labels map[string]any, spec map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "crdconf.apiloom.dev/v1", "kind": "Widget",
			"metadata": map[string]any{"name": name, "labels": labels},
			"spec":     spec,
		}}
	}
	requireMissing := func(what string, err error) {
		t.Helper()
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.engine: Required value") {
			t.Errorf("%s: err = %v, want 422 spec.engine: Required value", what, err)
		}
	}

	_, err := widgets.Create(ctx, widget("create", nil, map[string]any{"owner": "o"}), metav1.CreateOptions{})
	requireMissing("create", err)
	_, err = widgets.Apply(ctx, "apply", widget("apply", nil, map[string]any{"owner": "o"}), metav1.ApplyOptions{FieldManager: "t"})
	requireMissing("apply", err)

	set, err := widgets.Create(ctx, widget("hook-sets", map[string]any{"default-engine": "yes"}, map[string]any{"owner": "o"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create with the hook setting spec.engine: %v", err)
	}
	if got, _, _ := unstructured.NestedString(set.Object, "spec", "engine"); got != "mysql" {
		t.Errorf("spec.engine = %q, want the hook's mysql", got)
	}
	if _, err := widgets.Apply(ctx, "hook-sets-apply", widget("hook-sets-apply", map[string]any{"default-engine": "yes"}, map[string]any{"owner": "o"}), metav1.ApplyOptions{FieldManager: "t"}); err != nil {
		t.Errorf("apply with the hook setting spec.engine: %v", err)
	}

	kept, err := widgets.Create(ctx, widget("update", nil, map[string]any{"owner": "o", "engine": "postgres"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	unstructured.RemoveNestedField(kept.Object, "spec", "engine")
	_, err = widgets.Update(ctx, kept, metav1.UpdateOptions{})
	requireMissing("update", err)
}
