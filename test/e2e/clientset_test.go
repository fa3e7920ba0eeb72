package e2e

import (
	"reflect"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
)

func newDatabase(name string) *examplev1.Database {
	return &examplev1.Database{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"team": "checkout"}},
		Spec:       examplev1.DatabaseSpec{Engine: "postgres", Version: "16.4", Replicas: 3, StorageGiB: 100, Region: "eu-central"},
	}
}

func TestClientsetNamespacedLifecycle(t *testing.T) {
	ts, cs := startServer(t)
	ts.CreateNamespaces(t, "shop")
	ctx := t.Context()
	dbs := cs.ExampleV1().Databases("shop")

	created, err := dbs.Create(ctx, newDatabase("orders"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if created.UID == "" || created.ResourceVersion == "" || created.CreationTimestamp.IsZero() || created.Generation != 1 {
		t.Fatalf("create did not set uid/resourceVersion/creationTimestamp/generation: %+v", created.ObjectMeta)
	}
	if created.Namespace != "shop" {
		t.Fatalf("namespace %q, want shop", created.Namespace)
	}
	if _, err := dbs.Create(ctx, newDatabase("orders"), metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("second create: want AlreadyExists, got %v", err)
	}

	got, err := dbs.Get(ctx, "orders", metav1.GetOptions{})
	if err != nil || !reflect.DeepEqual(got.Spec, created.Spec) || got.ResourceVersion != created.ResourceVersion {
		t.Fatalf("get: %v %+v", err, got)
	}
	if _, err := dbs.Get(ctx, "missing", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get missing: want NotFound, got %v", err)
	}

	// Update bumps generation on a spec change and conflicts on a stale resourceVersion.
	got.Spec.Replicas = 5
	updated, err := dbs.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	if updated.Generation != 2 || updated.ResourceVersion == got.ResourceVersion {
		t.Fatalf("update: generation %d rv %s (was %s)", updated.Generation, updated.ResourceVersion, got.ResourceVersion)
	}
	got.Spec.Replicas = 7 // got still carries the old resourceVersion
	if _, err := dbs.Update(ctx, got, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("stale update: want Conflict, got %v", err)
	}

	// The main resource ignores status; /status changes only status.
	withStatus := updated.DeepCopy()
	withStatus.Status.Phase = "Ready"
	withStatus.Spec.Replicas = 9
	afterMain, err := dbs.Update(ctx, withStatus, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update with status: %v", err)
	}
	if afterMain.Status.Phase != "" || afterMain.Spec.Replicas != 9 {
		t.Fatalf("main update: status %q replicas %d; want status ignored, spec applied", afterMain.Status.Phase, afterMain.Spec.Replicas)
	}
	statusWrite := afterMain.DeepCopy()
	statusWrite.Status = examplev1.DatabaseStatus{Phase: "Ready", ReadyReplicas: 9, ObservedGeneration: afterMain.Generation}
	statusWrite.Spec.Replicas = 1
	afterStatus, err := dbs.UpdateStatus(ctx, statusWrite, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("updateStatus: %v", err)
	}
	if afterStatus.Status.Phase != "Ready" || afterStatus.Spec.Replicas != 9 || afterStatus.Generation != afterMain.Generation {
		t.Fatalf("updateStatus: status %+v replicas %d generation %d", afterStatus.Status, afterStatus.Spec.Replicas, afterStatus.Generation)
	}

	// Merge patch and JSON patch.
	merged, err := dbs.Patch(ctx, "orders", types.MergePatchType, []byte(`{"spec":{"version":"17.0"},"metadata":{"labels":{"tier":"gold"}}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("merge patch: %v", err)
	}
	if merged.Spec.Version != "17.0" || merged.Labels["tier"] != "gold" || merged.Labels["team"] != "checkout" || merged.Status.Phase != "Ready" {
		t.Fatalf("merge patch result: %+v", merged)
	}
	jsonPatched, err := dbs.Patch(ctx, "orders", types.JSONPatchType, []byte(`[{"op":"replace","path":"/spec/storageGiB","value":250}]`), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("json patch: %v", err)
	}
	if jsonPatched.Spec.StorageGiB != 250 {
		t.Fatalf("json patch: storageGiB %d", jsonPatched.Spec.StorageGiB)
	}
	if _, err := dbs.Patch(ctx, "missing", types.MergePatchType, []byte(`{}`), metav1.PatchOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("patch missing: want NotFound, got %v", err)
	}
	if smp, err := dbs.Patch(ctx, "orders", types.StrategicMergePatchType, []byte(`{"spec":{"storageGiB":300}}`), metav1.PatchOptions{}); err != nil || smp.Spec.StorageGiB != 300 {
		t.Fatalf("strategic merge patch: %v", err) // TestStrategicMergePatchClientset has more
	}

	// Validation errors come back as Invalid.
	if _, err := dbs.Create(ctx, &examplev1.Database{ObjectMeta: metav1.ObjectMeta{Name: "Not_A_Name"}}, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Fatalf("invalid name: want Invalid, got %v", err)
	}

	// List with selectors.
	if _, err := dbs.Create(ctx, &examplev1.Database{ObjectMeta: metav1.ObjectMeta{Name: "analytics", Labels: map[string]string{"team": "data"}}, Spec: examplev1.DatabaseSpec{Engine: "mysql"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := dbs.List(ctx, metav1.ListOptions{LabelSelector: "team=checkout"})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "orders" || list.ResourceVersion == "" {
		t.Fatalf("label-selected list: %v %+v", err, list)
	}
	list, err = dbs.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=analytics"})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "analytics" {
		t.Fatalf("field-selected list: %v %+v", err, list)
	}
	// spec.engine is selectable through +kubebuilder:selectablefield.
	list, err = dbs.List(ctx, metav1.ListOptions{FieldSelector: "spec.engine=postgres"})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "orders" {
		t.Fatalf("list selected by spec.engine: %v %+v", err, list)
	}

	// Delete with a stale uid precondition conflicts; a plain delete works.
	wrongUID := types.UID("not-the-uid")
	if err := dbs.Delete(ctx, "orders", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &wrongUID}}); !apierrors.IsConflict(err) {
		t.Fatalf("delete with wrong uid: want Conflict, got %v", err)
	}
	if err := dbs.Delete(ctx, "orders", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := dbs.Get(ctx, "orders", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get after delete: want NotFound, got %v", err)
	}
	if err := dbs.Delete(ctx, "orders", metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("second delete: want NotFound, got %v", err)
	}
}

func TestClientsetClusterScopedAndPagination(t *testing.T) {
	_, cs := startServer(t)
	ctx := t.Context()
	regions := cs.ExampleV1().Regions()

	for _, name := range []string{"eu-central", "eu-west", "us-east", "us-west", "ap-south"} {
		r := &examplev1.Region{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: examplev1.RegionSpec{Provider: "aws", DisplayName: name}}
		created, err := regions.Create(ctx, r, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		if created.Namespace != "" {
			t.Fatalf("cluster-scoped object got namespace %q", created.Namespace)
		}
	}
	// Pages of 2 cover all 5, each carrying a continue token until the last.
	var names []string
	opts := metav1.ListOptions{Limit: 2}
	for page := 0; ; page++ {
		l, err := regions.List(ctx, opts)
		if err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
		for _, r := range l.Items {
			names = append(names, r.Name)
		}
		if l.Continue == "" {
			break
		}
		if l.RemainingItemCount == nil {
			t.Fatalf("page %d: continue without remainingItemCount", page)
		}
		opts.Continue = l.Continue
	}
	if len(names) != 5 {
		t.Fatalf("paginated list returned %v", names)
	}
	if _, err := regions.List(ctx, metav1.ListOptions{Limit: 2, Continue: "garbage"}); !apierrors.IsBadRequest(err) {
		t.Fatalf("bad continue token: want BadRequest, got %v", err)
	}

	r, err := regions.Get(ctx, "eu-west", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r.Spec.Zones = []string{"eu-west-1a"}
	if _, err := regions.Update(ctx, r, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update: %v", err)
	}
	if _, err := regions.Update(ctx, r, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("stale update: want Conflict, got %v", err)
	}
	if _, err := regions.Patch(ctx, "eu-west", types.MergePatchType, []byte(`{"spec":{"provider":"gcp"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("merge patch: %v", err)
	}
	if err := regions.Delete(ctx, "eu-west", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if err := regions.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatalf("deletecollection: %v", err)
	}
	l, err := regions.List(ctx, metav1.ListOptions{})
	if err != nil || len(l.Items) != 0 {
		t.Fatalf("after deletecollection: %v %d items", err, len(l.Items))
	}
}
