package e2e

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
)

// TestValidationAndDefaults checks the server validates and defaults the
// kinds of apis/example/v1 by their schemas as kube-apiserver does a CRD
// that controller-gen made of the same types, through the generated
// clientset: violations are one 422 Invalid with a cause per field, worded
// as the CRD's (the OpenAPI validator visits properties in map order, so
// the causes' order is not compared), and absent fields get their
// defaults.
func TestValidationAndDefaults(t *testing.T) {
	ts, cs := startServer(t)
	ts.CreateNamespaces(t, "shop")
	ctx := t.Context()
	dbs := cs.ExampleV1().Databases("shop")

	bad := newDatabase("bad")
	bad.Spec.Engine, bad.Spec.Replicas = "oracle", 10
	_, err := dbs.Create(ctx, bad, metav1.CreateOptions{})
	var st *apierrors.StatusError
	if !apierrors.IsInvalid(err) || !errors.As(err, &st) || st.ErrStatus.Details == nil {
		t.Fatalf("create with engine oracle and 10 replicas: want Invalid, got %v", err)
	}
	var fields []string
	for _, c := range st.ErrStatus.Details.Causes {
		fields = append(fields, string(c.Type)+" "+c.Field+": "+c.Message)
	}
	slices.Sort(fields)
	// Database has CEL rules, which an unsupported value keeps from
	// running: the CRD then says so in one more cause.
	if want := []string{
		`FieldValueInvalid <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation`,
		`FieldValueInvalid spec.replicas: Invalid value: 10: spec.replicas in body should be less than or equal to 9`,
		`FieldValueNotSupported spec.engine: Unsupported value: "oracle": supported values: "postgres", "mysql", "mariadb"`,
	}; !reflect.DeepEqual(fields, want) {
		t.Errorf("causes = %q, want %q (%v)", fields, want, err)
	}
	if d := st.ErrStatus.Details; d.Kind != "Database" || d.Group != "example.apiloom.dev" || d.Name != "bad" {
		t.Errorf("details = %+v", d)
	}
	if _, err := dbs.Get(ctx, "bad", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("rejected object was stored: %v", err)
	}

	// Replicas and storageGiB are omitempty: a typed client's zero is
	// absent from the JSON it sends, so defaulted; an explicit 0 in the
	// request is validated as a CRD validates it, and refused as below
	// the minimum of 1.
	plain := &examplev1.Database{ObjectMeta: metav1.ObjectMeta{Name: "plain"}, Spec: examplev1.DatabaseSpec{Engine: "mariadb"}}
	created, err := dbs.Create(ctx, plain, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.Spec.Replicas != 1 || created.Spec.StorageGiB != 10 {
		t.Errorf("created spec %+v, want replicas 1 and storageGiB 10 defaulted", created.Spec)
	}
	err = cs.ExampleV1().RESTClient().Post().Namespace("shop").Resource("databases").
		Body([]byte(`{"apiVersion":"example.apiloom.dev/v1","kind":"Database","metadata":{"name":"zero"},"spec":{"engine":"mysql","replicas":0}}`)).
		SetHeader("Content-Type", "application/json").Do(ctx).Error()
	if !apierrors.IsInvalid(err) || err.Error() != `Database.example.apiloom.dev "zero" is invalid: spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1` {
		t.Errorf(`"replicas":0: %v, want the CRD's 422`, err)
	}

	// Updates and status writes are validated too.
	created.Spec.Version = "latest"
	if _, err := dbs.Update(ctx, created, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) || !strings.HasSuffix(err.Error(),
		`spec.version: Invalid value: "latest": spec.version in body should match '^[0-9]+(\.[0-9]+)*$'`) {
		t.Errorf("update with version %q: want Invalid, got %v", created.Spec.Version, err)
	}
	created.Spec.Version = "11.4"
	created.Status.Phase = "Exploded"
	// The status is validated by its own schema, so the message names the
	// field from status down, as the CRD's does.
	if _, err := dbs.UpdateStatus(ctx, created, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(),
		`status.phase: Unsupported value: "Exploded": supported values: "Pending", "Provisioning", "Ready", "Failed"`) {
		t.Errorf("status phase Exploded: want Invalid, got %v", err)
	}
	regions := cs.ExampleV1().Regions()
	if _, err := regions.Create(ctx, &examplev1.Region{ObjectMeta: metav1.ObjectMeta{Name: "moon"}, Spec: examplev1.RegionSpec{Provider: "nasa"}}, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("region provider nasa: want Invalid, got %v", err)
	}
}
