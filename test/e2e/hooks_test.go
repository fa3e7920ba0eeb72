package e2e

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	crdconfv1 "github.com/apiloom/apiloom/apis/crdconf/v1"
	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	applycrdconf "github.com/apiloom/apiloom/generated/applyconfigurations/crdconf/v1"
)

// newWidget is a valid Widget named name with labels.
func newWidget(name string, labels map[string]string) *crdconfv1.Widget {
	owner := "me"
	return &crdconfv1.Widget{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: labels},
		Spec:       crdconfv1.WidgetSpec{Engine: "postgres", Owner: &owner},
	}
}

// expectInvalid fails t unless err is a 422 Invalid with a cause on field.
func expectInvalid(t *testing.T, what string, err error, field string) {
	t.Helper()
	if !apierrors.IsInvalid(err) {
		t.Fatalf("%s: got %v, want 422 Invalid", what, err)
	}
	var st apierrors.APIStatus
	errors.As(err, &st)
	for _, c := range st.Status().Details.Causes {
		if c.Field == field && strings.Contains(c.Message, "refused by the test hook") {
			return
		}
	}
	t.Fatalf("%s: causes %+v, want one on %s from the hook", what, st.Status().Details.Causes, field)
}

// TestHooksWritePaths drives every write path of a kind with hooks
// through the generated clientset and checks which hooks ran, with what
// operation, subresource, dryRun and old object, and what their results
// did: mutations stored, errors 422 with causes (403 for a delete),
// warnings delivered.
func TestHooksWritePaths(t *testing.T) {
	rec, warns := &hookRecorder{}, &warningRecorder{}
	_, c := startHookServer(t, rec, 10*time.Second, warns)
	ctx := t.Context()
	widgets := c.CrdconfV1().Widgets("default")

	// create
	w, err := widgets.Create(ctx, newWidget("w1", nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	expectCalls(t, "create", rec.take("w1"), []hookCall{
		{hook: "Default", op: "CREATE"}, {hook: "PrepareForCreate", op: "CREATE"}, {hook: "ValidateCreate", op: "CREATE"}})
	if w.Annotations["hooks.test/default"] != "CREATE" || w.Labels["hooks.test/created"] != "yes" {
		t.Errorf("create: the mutating hooks' changes are not stored: %v %v", w.Annotations, w.Labels)
	}
	if got := warns.take(); len(got) != 1 || got[0] != "widget w1 validated by the test hook" {
		t.Errorf("create: warnings %q", got)
	}
	_, err = widgets.Create(ctx, newWidget("w-refused", map[string]string{"hook": "refuse"}), metav1.CreateOptions{})
	expectInvalid(t, "create", err, "spec.engine")
	if _, err := widgets.Get(ctx, "w-refused", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a refused create stored the object: %v", err)
	}

	// dryRun create: the hooks see it, nothing is stored.
	if _, err := widgets.Create(ctx, newWidget("w-dry", nil), metav1.CreateOptions{DryRun: []string{"All"}}); err != nil {
		t.Fatal(err)
	}
	expectCalls(t, "dryRun create", rec.take("w-dry"), []hookCall{
		{hook: "Default", op: "CREATE", dryRun: true}, {hook: "PrepareForCreate", op: "CREATE", dryRun: true}, {hook: "ValidateCreate", op: "CREATE", dryRun: true}})
	warns.take()

	// update
	w.Spec.Label = "updated"
	old := w.ResourceVersion
	if w, err = widgets.Update(ctx, w, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	update := []hookCall{{hook: "Default", op: "UPDATE"}, {hook: "PrepareForUpdate", op: "UPDATE", oldRV: old}, {hook: "ValidateUpdate", op: "UPDATE", oldRV: old}}
	expectCalls(t, "update", rec.take("w1"), update)
	if w.Annotations["hooks.test/old-rv"] != old || w.Annotations["hooks.test/default"] != "UPDATE" {
		t.Errorf("update: annotations %v", w.Annotations)
	}

	// every patch type, each accepted and refused
	for _, p := range []struct {
		pt          types.PatchType
		ok, refused string
	}{
		{types.MergePatchType, `{"spec":{"label":"merge"}}`, `{"metadata":{"labels":{"hook":"refuse"}}}`},
		{types.JSONPatchType, `[{"op":"replace","path":"/spec/label","value":"json"}]`, `[{"op":"add","path":"/metadata/labels","value":{"hook":"refuse"}}]`},
		{types.StrategicMergePatchType, `{"spec":{"label":"smp"}}`, `{"metadata":{"labels":{"hook":"refuse"}}}`},
	} {
		old := w.ResourceVersion
		if w, err = widgets.Patch(ctx, "w1", p.pt, []byte(p.ok), metav1.PatchOptions{}); err != nil {
			t.Fatalf("%s: %v", p.pt, err)
		}
		update := []hookCall{{hook: "Default", op: "UPDATE"}, {hook: "PrepareForUpdate", op: "UPDATE", oldRV: old}, {hook: "ValidateUpdate", op: "UPDATE", oldRV: old}}
		expectCalls(t, string(p.pt), rec.take("w1"), update)
		_, err = widgets.Patch(ctx, "w1", p.pt, []byte(p.refused), metav1.PatchOptions{})
		expectInvalid(t, string(p.pt), err, "spec.owner")
		rec.take("w1")
		// dryRun
		if _, err = widgets.Patch(ctx, "w1", p.pt, []byte(p.ok), metav1.PatchOptions{DryRun: []string{"All"}}); err != nil {
			t.Fatal(err)
		}
		if calls := rec.take("w1"); len(calls) != 3 || !calls[2].dryRun || calls[2].hook != "ValidateUpdate" {
			t.Errorf("%s dryRun: calls %v", p.pt, calls)
		}
	}
	if got := warns.take(); len(got) == 0 {
		t.Error("patch: no warnings")
	}

	// server-side apply: create, then update
	cfg := applycrdconf.Widget("w-apply", "default").WithSpec(applycrdconf.WidgetSpec().WithEngine("postgres").WithOwner("me"))
	a, err := widgets.Apply(ctx, cfg, metav1.ApplyOptions{FieldManager: "test", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	expectCalls(t, "apply create", rec.take("w-apply"), []hookCall{
		{hook: "Default", op: "CREATE"}, {hook: "PrepareForCreate", op: "CREATE"}, {hook: "ValidateCreate", op: "CREATE"}})
	cfg.Spec.WithLabel("applied")
	if _, err := widgets.Apply(ctx, cfg, metav1.ApplyOptions{FieldManager: "test", Force: true}); err != nil {
		t.Fatal(err)
	}
	expectCalls(t, "apply update", rec.take("w-apply"), []hookCall{
		{hook: "Default", op: "UPDATE"}, {hook: "PrepareForUpdate", op: "UPDATE", oldRV: a.ResourceVersion}, {hook: "ValidateUpdate", op: "UPDATE", oldRV: a.ResourceVersion}})
	cfg.WithLabels(map[string]string{"hook": "refuse"})
	_, err = widgets.Apply(ctx, cfg, metav1.ApplyOptions{FieldManager: "test", Force: true})
	expectInvalid(t, "apply", err, "spec.owner")
	rec.take("w-apply")

	// status: the status hooks, not the spec hooks
	ready := "Ready"
	w.Status.Phase = &ready
	old = w.ResourceVersion
	if w, err = widgets.UpdateStatus(ctx, w, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	expectCalls(t, "status", rec.take("w1"), []hookCall{
		{hook: "Default", op: "UPDATE", sub: "status"}, {hook: "PrepareForStatusUpdate", op: "UPDATE", sub: "status", oldRV: old},
		{hook: "ValidateStatusUpdate", op: "UPDATE", sub: "status", oldRV: old}})
	if w.Status.ObservedGeneration == nil || *w.Status.ObservedGeneration != w.Generation {
		t.Errorf("status: PrepareForStatusUpdate's change not stored: %v", w.Status.ObservedGeneration)
	}
	if got := w.Annotations["hooks.test/default"]; got != "UPDATE" {
		t.Errorf("status: a hook changed metadata through /status: annotation %q", got)
	}
	_, err = widgets.Patch(ctx, "w1", types.MergePatchType, []byte(`{"status":{"phase":"Failed"}}`), metav1.PatchOptions{}, "status")
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "status.phase: Forbidden: refused by the test hook") {
		t.Errorf("status patch: got %v, want 422 on status.phase", err)
	}
	rec.take("w1")

	// delete: refused with 403, dryRun, then done
	if _, err := widgets.Patch(ctx, "w1", types.MergePatchType, []byte(`{"metadata":{"labels":{"keep":"true"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	rec.take("w1")
	err = widgets.Delete(ctx, "w1", metav1.DeleteOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "kept by the test hook") {
		t.Fatalf("delete: got %v, want 403 from the hook", err)
	}
	expectCalls(t, "delete", rec.take("w1"), []hookCall{{hook: "ValidateDelete", op: "DELETE"}})
	if err := widgets.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("deletecollection: got %v, want 403 from the hook", err)
	}
	if _, err := widgets.Get(ctx, "w1", metav1.GetOptions{}); err != nil {
		t.Fatalf("a refused delete deleted: %v", err)
	}
	rec.take("w1")
	rec.take("w-apply")
	if _, err := widgets.Patch(ctx, "w1", types.JSONPatchType, []byte(`[{"op":"remove","path":"/metadata/labels/keep"}]`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	rec.take("w1")
	warns.take()
	if err := widgets.Delete(ctx, "w1", metav1.DeleteOptions{DryRun: []string{"All"}}); err != nil {
		t.Fatal(err)
	}
	expectCalls(t, "dryRun delete", rec.take("w1"), []hookCall{{hook: "ValidateDelete", op: "DELETE", dryRun: true}})
	if err := widgets.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	expectCalls(t, "deletecollection", rec.take("w1"), []hookCall{{hook: "ValidateDelete", op: "DELETE"}})
	if got := warns.take(); !strings.Contains(strings.Join(got, "\n"), "widget w1 deleted") {
		t.Errorf("delete: warnings %q", got)
	}
}

// TestHooksFailures checks that a panicking hook and one past the hook
// timeout fail only their own request with a 500, and that a hook reads
// another kind through the cache.
func TestHooksFailures(t *testing.T) {
	rec := &hookRecorder{}
	_, c := startHookServer(t, rec, time.Second, &warningRecorder{})
	ctx := t.Context()
	widgets := c.CrdconfV1().Widgets("default")
	for _, mode := range []string{"panic", "slow"} {
		start := time.Now()
		_, err := widgets.Create(ctx, newWidget("w-"+mode, map[string]string{"hook": mode}), metav1.CreateOptions{})
		var st apierrors.APIStatus
		if !errors.As(err, &st) || st.Status().Code != http.StatusInternalServerError || st.Status().Reason != metav1.StatusReasonInternalError {
			t.Fatalf("%s: got %v, want 500 InternalError", mode, err)
		}
		if mode == "slow" && time.Since(start) > 5*time.Second {
			t.Errorf("slow: the request took %v with a 1s hook timeout", time.Since(start))
		}
		// The server goes on serving, the same kind included.
		if _, err := widgets.Create(ctx, newWidget("w-after-"+mode, nil), metav1.CreateOptions{}); err != nil {
			t.Fatalf("after %s: %v", mode, err)
		}
	}

	// A hook reading a Region through the cache.
	w := newWidget("w-region", map[string]string{"hook": "region", "region": "r1"})
	_, err := widgets.Create(ctx, w, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `regions.example.apiloom.dev "r1" not found`) {
		t.Fatalf("region missing: got %v", err)
	}
	if _, err := c.ExampleV1().Regions().Create(ctx, &examplev1.Region{ObjectMeta: metav1.ObjectMeta{Name: "r1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the hook to see the Region", func(ctx context.Context) (bool, error) {
		_, err := widgets.Create(ctx, w, metav1.CreateOptions{})
		return err == nil, err
	})
}

// TestHooksKubectl checks that hook warnings and refusals reach kubectl.
func TestHooksKubectl(t *testing.T) {
	requireKubectl(t)
	ts, _ := startHookServer(t, &hookRecorder{}, 10*time.Second, &warningRecorder{})
	k := &kubectlEnv{t: t, kubeconfig: ts.Kubeconfig, home: t.TempDir()}
	manifest := `apiVersion: crdconf.apiloom.dev/v1
kind: Widget
metadata: {name: wk, namespace: default}
spec: {engine: postgres, owner: me}
`
	stderr := k.runStdin(manifest, "apply", "-f", "-")
	if !strings.Contains(stderr, "Warning: widget wk validated by the test hook") {
		t.Errorf("kubectl apply: stderr %q lacks the hook's warning", stderr)
	}
	out, err := k.cmdOutput("label", "widget", "wk", "hook=refuse")
	if err == nil || !strings.Contains(out, "refused by the test hook") {
		t.Errorf("kubectl label: %v\n%s", err, out)
	}
}

// runStdin runs kubectl with stdin and returns its stderr, failing the
// test on a non-zero exit.
func (k *kubectlEnv) runStdin(stdin string, args ...string) string {
	k.t.Helper()
	ctx, cancel := context.WithTimeout(k.t.Context(), time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	c := k.cmd(ctx, args...)
	c.Stdin, c.Stdout, c.Stderr = strings.NewReader(stdin), &stdout, &stderr
	if err := c.Run(); err != nil {
		k.t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stderr.String()
}

// cmdOutput runs kubectl and returns its combined output and error.
func (k *kubectlEnv) cmdOutput(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(k.t.Context(), time.Minute)
	defer cancel()
	out, err := k.cmd(ctx, args...).CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		k.t.Fatal(err)
	}
	return string(out), err
}
