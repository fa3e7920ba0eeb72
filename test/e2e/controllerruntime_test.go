package e2e

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	acv1 "github.com/apiloom/apiloom/generated/applyconfigurations/example/v1"
)

// TestControllerRuntimeApply applies through a controller-runtime client,
// as operators do: client.Apply with an apply configuration, and the older
// Patch(obj, client.Apply) with a typed object, on the object and on its
// status.
func TestControllerRuntimeApply(t *testing.T) {
	ts, _ := startServer(t)
	ts.CreateNamespaces(t, "ops")
	ctx := t.Context()
	scheme := runtime.NewScheme()
	if err := examplev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(ts.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}

	if err := c.Apply(ctx, acv1.Database("cr", "ops").WithSpec(acv1.DatabaseSpec().WithEngine("postgres").WithReplicas(2)),
		client.FieldOwner("operator")); err != nil {
		t.Fatal(err)
	}
	if err := c.Status().Apply(ctx, acv1.Database("cr", "ops").WithStatus(acv1.DatabaseStatus().WithPhase("Provisioning").
		WithConditions(condition("Ready", "False"))), client.FieldOwner("operator-status")); err != nil {
		t.Fatal(err)
	}

	// The typed form: TypeMeta must be set, as for any apply.
	db := &examplev1.Database{
		TypeMeta:   metav1.TypeMeta{APIVersion: "example.apiloom.dev/v1", Kind: "Database"},
		ObjectMeta: metav1.ObjectMeta{Name: "cr", Namespace: "ops", Labels: map[string]string{"owner": "me"}},
		Spec:       examplev1.DatabaseSpec{Engine: "postgres"},
	}
	//nolint:staticcheck // Patch with client.Apply is deprecated but what most operators still call.
	if err := c.Patch(ctx, db, client.Apply, client.FieldOwner("labeler"), client.ForceOwnership); err != nil {
		t.Fatal(err)
	}
	st := &examplev1.Database{
		TypeMeta:   metav1.TypeMeta{APIVersion: "example.apiloom.dev/v1", Kind: "Database"},
		ObjectMeta: metav1.ObjectMeta{Name: "cr", Namespace: "ops"},
		Status:     examplev1.DatabaseStatus{Endpoint: "db.ops:5432"},
	}
	//nolint:staticcheck // as above
	if err := c.Status().Patch(ctx, st, client.Apply, client.FieldOwner("endpoint-writer")); err != nil {
		t.Fatal(err)
	}

	var got examplev1.Database
	if err := c.Get(ctx, types.NamespacedName{Namespace: "ops", Name: "cr"}, &got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.Replicas != 2 || got.Labels["owner"] != "me" || got.Status.Phase != "Provisioning" || got.Status.Endpoint != "db.ops:5432" || len(got.Status.Conditions) != 1 {
		t.Fatalf("object %+v", got)
	}
	want := []string{"endpoint-writer/Apply/status", "labeler/Apply", "operator-status/Apply/status", "operator/Apply"}
	if !slices.Equal(managers(&got), want) {
		t.Fatalf("managers %v, want %v", managers(&got), want)
	}
}
