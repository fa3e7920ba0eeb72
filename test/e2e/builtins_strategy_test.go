package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// TestBuiltinsStrategy: the facts of each built-in kind's registry strategy
// that kube-apiserver v1.37 shows a client (builtin/apis.yaml's strategy),
// through client-go as the conformance tests and Helm use it.
func TestBuiltinsStrategy(t *testing.T) {
	ts, _ := startServer(t)
	kc := kubernetes.NewForConfigOrDie(ts.Config)
	ctx := t.Context()
	if _, err := kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "strategy"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// An update without resourceVersion: allowed for a Secret (Helm's
	// release records), a ConfigMap and a Role, 422 for a Lease.
	secret, err := kc.CoreV1().Secrets("strategy").Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "release", Labels: map[string]string{"status": "pending-install"}},
		Data:       map[string][]byte{"release": []byte("v1")},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if secret.Generation != 0 {
		t.Errorf("a created Secret has generation %d, want none", secret.Generation)
	}
	unconditional := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "release", Labels: map[string]string{"status": "deployed"}}, Data: map[string][]byte{"release": []byte("v2")}}
	updated, err := kc.CoreV1().Secrets("strategy").Update(ctx, unconditional, metav1.UpdateOptions{})
	if err != nil || updated.Labels["status"] != "deployed" || updated.Generation != 0 || updated.UID != secret.UID {
		t.Fatalf("Secret update without resourceVersion: %v, %+v", err, updated)
	}
	if _, err := kc.CoreV1().ConfigMaps("strategy").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kc.CoreV1().ConfigMaps("strategy").Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Data: map[string]string{"k": "v"}}, metav1.UpdateOptions{}); err != nil {
		t.Errorf("ConfigMap update without resourceVersion: %v", err)
	}
	if _, err := kc.RbacV1().Roles("strategy").Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "r"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kc.RbacV1().Roles("strategy").Update(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "r"}}, metav1.UpdateOptions{}); err != nil {
		t.Errorf("Role update without resourceVersion: %v", err)
	}
	if _, err := kc.CoordinationV1().Leases("strategy").Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "l"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = kc.CoordinationV1().Leases("strategy").Update(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "l"}}, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "must be specified for an update") {
		t.Errorf("Lease update without resourceVersion: %v, want 422", err)
	}

	// A patch does not move a built-in kind's generation.
	patched, err := kc.CoreV1().Secrets("strategy").Patch(ctx, "release", types.MergePatchType, []byte(`{"data":{"release":"djM="}}`), metav1.PatchOptions{})
	if err != nil || patched.Generation != 0 {
		t.Errorf("patched Secret: %v, generation %d", err, patched.Generation)
	}

	// Listed items are what a Create or Get returns: no kind and
	// apiVersion of their own, from the watch cache (a consistent list)
	// or not (resourceVersion=0 too).
	got, err := kc.CoreV1().Secrets("strategy").Get(ctx, "release", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, rv := range []string{"", "0"} {
		list, err := kc.CoreV1().Secrets("strategy").List(ctx, metav1.ListOptions{ResourceVersion: rv})
		if err != nil || len(list.Items) != 1 || !equality.Semantic.DeepEqual(list.Items[0], *got) {
			t.Errorf("list (resourceVersion %q): %v, items %+v; want %+v", rv, err, list.Items, got)
		}
	}
	raw, err := kc.CoreV1().RESTClient().Get().AbsPath("/api/v1/namespaces/strategy/secrets").DoRaw(ctx)
	var list struct{ Items []map[string]any }
	if err != nil || json.Unmarshal(raw, &list) != nil || len(list.Items) != 1 || list.Items[0]["kind"] != nil || list.Items[0]["apiVersion"] != nil {
		t.Errorf("raw list of Secrets: %v: %s", err, raw)
	}

	// A status write of a Namespace keeps its metadata changes.
	ns, err := kc.CoreV1().Namespaces().Patch(ctx, "strategy", types.MergePatchType, []byte(`{"metadata":{"annotations":{"note":"kept"}}}`), metav1.PatchOptions{}, "status")
	if err != nil || ns.Annotations["note"] != "kept" {
		t.Errorf("namespaces/status patch of an annotation: %v, %v", err, ns.Annotations)
	}

	// /api/ and /apis/ are served as /api and /apis.
	for _, p := range []string{"/api/", "/apis/"} {
		if body, err := kc.CoreV1().RESTClient().Get().AbsPath(p).DoRaw(ctx); err != nil || !strings.Contains(string(body), `"kind":"API`) {
			t.Errorf("GET %s: %v %s", p, err, body)
		}
	}
}
