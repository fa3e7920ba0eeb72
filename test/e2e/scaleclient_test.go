package e2e

import (
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestClientsetScale: the generated clientset's GetScale and UpdateScale
// (from +genclient:method markers, as kube's own scalable kinds have them)
// read and write the scale subresource, and a Scale outside the schema's
// bounds is refused as the object would be.
func TestClientsetScale(t *testing.T) {
	_, cs := startServer(t)
	ctx := t.Context()
	dbs := cs.ExampleV1().Databases("default")
	createDatabase(t, cs, "scaled", 2)

	sc, err := dbs.GetScale(ctx, "scaled", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sc.Name != "scaled" || sc.Spec.Replicas != 2 || sc.UID == "" {
		t.Fatalf("GetScale = %+v", sc)
	}

	sc.Spec.Replicas = 5
	updated, err := dbs.UpdateScale(ctx, "scaled", sc, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if updated.Spec.Replicas != 5 || updated.ResourceVersion == sc.ResourceVersion {
		t.Errorf("UpdateScale = %+v", updated)
	}
	db, err := dbs.Get(ctx, "scaled", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if db.Spec.Replicas != 5 {
		t.Errorf("after UpdateScale spec.replicas = %d, want 5", db.Spec.Replicas)
	}

	// Maximum=9 on spec.replicas applies to a write through /scale too.
	_, err = dbs.UpdateScale(ctx, "scaled", &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{Name: "scaled", Namespace: "default"},
		Spec:       autoscalingv1.ScaleSpec{Replicas: 10},
	}, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Errorf("UpdateScale to 10 replicas: %v, want Invalid", err)
	}
	if _, err := dbs.GetScale(ctx, "missing", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("GetScale of a missing database: %v, want NotFound", err)
	}
}
