package e2e

import (
	"context"
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	"github.com/apiloom/apiloom/generated/clientset/versioned"
)

// TestExampleHooks checks the example group's generator-wired hooks
// (hooks/example/v1) through the generated clientset and kubectl: a
// Database's region is immutable, a Region in use is not deleted, and an
// old postgres version is stored with a warning.
func TestExampleHooks(t *testing.T) {
	requireKubectl(t)
	ts, _ := startServer(t)
	warns := &warningRecorder{}
	cfg := rest.CopyConfig(ts.Config)
	cfg.WarningHandlerWithContext = warns
	c := versioned.NewForConfigOrDie(cfg)
	ctx := t.Context()
	for _, name := range []string{"eu-1", "us-1"} {
		if _, err := c.ExampleV1().Regions().Create(ctx, &examplev1.Region{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	dbs := c.ExampleV1().Databases("default")
	db, err := dbs.Create(ctx, &examplev1.Database{
		ObjectMeta: metav1.ObjectMeta{Name: "db1"},
		Spec:       examplev1.DatabaseSpec{Engine: "postgres", Version: "12.4", Region: "eu-1"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := warns.take(); len(got) != 1 || got[0] != "spec.version: postgres 12.4 is deprecated; use 13 or later" {
		t.Errorf("create: warnings %q", got)
	}

	// spec.region is immutable, on every way to update.
	_, err = dbs.Patch(ctx, "db1", types.MergePatchType, []byte(`{"spec":{"region":"us-1"}}`), metav1.PatchOptions{})
	var st apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &st) || len(st.Status().Details.Causes) != 1 ||
		st.Status().Details.Causes[0].Field != "spec.region" || !strings.Contains(st.Status().Details.Causes[0].Message, "field is immutable") {
		t.Fatalf("moving a Database: got %v, want 422 with a cause on spec.region", err)
	}
	db.Spec.Region = ""
	if _, err := dbs.Update(ctx, db, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Fatalf("clearing spec.region: got %v, want 422", err)
	}
	warns.take() // the refused writes were still of postgres 12.4
	// The hooks are v1's, the storage version's: they hold through
	// v2alpha1 too, converted.
	_, err = c.ExampleV2alpha1().Databases("default").Patch(ctx, "db1", types.MergePatchType, []byte(`{"spec":{"region":"us-1"}}`), metav1.PatchOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.region: Invalid value: \"us-1\": field is immutable") {
		t.Fatalf("moving a Database through v2alpha1: got %v, want 422 on spec.region", err)
	}
	warns.take()
	if _, err := dbs.Patch(ctx, "db1", types.MergePatchType, []byte(`{"spec":{"version":"16.1"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := warns.take(); len(got) != 0 {
		t.Errorf("postgres 16: warnings %q", got)
	}

	// A Region in use stays; one not in use goes.
	err = c.ExampleV1().Regions().Delete(ctx, "eu-1", metav1.DeleteOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "used by Database default/db1") {
		t.Fatalf("deleting a Region in use: got %v, want 403 naming default/db1", err)
	}
	if err := c.ExampleV1().Regions().Delete(ctx, "us-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	{
		k := &kubectlEnv{t: t, kubeconfig: ts.Kubeconfig, home: t.TempDir()}
		stderr := k.runStdin(`apiVersion: example.apiloom.dev/v1
kind: Database
metadata: {name: db2, namespace: default}
spec: {engine: postgres, version: "11", region: eu-1}
`, "apply", "-f", "-")
		if !strings.Contains(stderr, "Warning: spec.version: postgres 11 is deprecated") {
			t.Errorf("kubectl apply: stderr %q", stderr)
		}
		// /scale reaches the update hooks too.
		if stderr := k.runStdin("", "scale", "database", "db2", "--replicas=2"); !strings.Contains(stderr, "postgres 11 is deprecated") {
			t.Errorf("kubectl scale: stderr %q", stderr)
		}
		out, err := k.cmdOutput("delete", "region", "eu-1")
		if err == nil || !strings.Contains(out, "is used by Database default/") {
			t.Errorf("kubectl delete region: %v\n%s", err, out)
		}
		k.run("delete", "database", "db2")
	}

	if err := dbs.Delete(ctx, "db1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Region to be deletable", func(ctx context.Context) (bool, error) {
		err := c.ExampleV1().Regions().Delete(ctx, "eu-1", metav1.DeleteOptions{})
		return err == nil, err
	})
}
