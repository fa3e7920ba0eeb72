package e2e

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// TestBuiltinDefaults: built-in kinds are defaulted as kube-apiserver
// defaults them, on every write path: a Secret without a type is Opaque
// and its stringData is merged into data and never stored; a Namespace
// keeps the kubernetes.io/metadata.name label, whatever a write does to it.
func TestBuiltinDefaults(t *testing.T) {
	ts, _ := startServer(t)
	kc := kubernetes.NewForConfigOrDie(ts.Config)
	ctx := t.Context()
	ts.CreateNamespaces(t, "defaults")
	secrets := kc.CoreV1().Secrets("defaults")

	check := func(what string, s *corev1.Secret, err error, data map[string]string) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if s.Type != corev1.SecretTypeOpaque || len(s.StringData) != 0 || len(s.Data) != len(data) {
			t.Fatalf("%s: type %q stringData %v data %v, want Opaque, none, %v", what, s.Type, s.StringData, s.Data, data)
		}
		for k, v := range data {
			if string(s.Data[k]) != v {
				t.Fatalf("%s: data[%s] = %q, want %q", what, k, s.Data[k], v)
			}
		}
	}
	dry, err := secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, StringData: map[string]string{"a": "1"}},
		metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	check("dry-run create", dry, err, map[string]string{"a": "1"})
	s, err := secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"},
		Data: map[string][]byte{"a": []byte("0"), "b": []byte("2")}, StringData: map[string]string{"a": "1"}}, metav1.CreateOptions{})
	check("create", s, err, map[string]string{"a": "1", "b": "2"})
	s, err = secrets.Get(ctx, "s", metav1.GetOptions{})
	check("get", s, err, map[string]string{"a": "1", "b": "2"})
	s.StringData = map[string]string{"c": "3"}
	s, err = secrets.Update(ctx, s, metav1.UpdateOptions{})
	check("update", s, err, map[string]string{"a": "1", "b": "2", "c": "3"})
	s, err = secrets.Patch(ctx, "s", types.MergePatchType, []byte(`{"stringData":{"d":"4"}}`), metav1.PatchOptions{})
	check("merge patch", s, err, map[string]string{"a": "1", "b": "2", "c": "3", "d": "4"})
	s, err = secrets.Patch(ctx, "s", types.StrategicMergePatchType, []byte(`{"stringData":{"e":"5"}}`), metav1.PatchOptions{})
	check("strategic merge patch", s, err, map[string]string{"a": "1", "b": "2", "c": "3", "d": "4", "e": "5"})
	s, err = secrets.Patch(ctx, "applied", types.ApplyPatchType, []byte(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"applied"},"stringData":{"f":"6"}}`), metav1.PatchOptions{FieldManager: "m"})
	check("apply", s, err, map[string]string{"f": "6"})

	namespaces := kc.CoreV1().Namespaces()
	label := func(what string, ns *corev1.Namespace, err error) {
		t.Helper()
		if err != nil || ns.Labels[corev1.LabelMetadataName] != "defaults" {
			t.Fatalf("%s: %v, labels %v", what, err, ns.Labels)
		}
	}
	ns, err := namespaces.Get(ctx, "defaults", metav1.GetOptions{})
	label("create", ns, err)
	ns.Labels = nil
	ns, err = namespaces.Update(ctx, ns, metav1.UpdateOptions{})
	label("update without labels", ns, err)
	ns, err = namespaces.Patch(ctx, "defaults", types.MergePatchType, []byte(`{"metadata":{"labels":{"kubernetes.io/metadata.name":"other"}}}`), metav1.PatchOptions{})
	label("merge patch changing the label", ns, err)
	ns, err = namespaces.Patch(ctx, "defaults", types.JSONPatchType, []byte(`[{"op":"remove","path":"/metadata/labels"}]`), metav1.PatchOptions{})
	label("JSON patch removing the labels", ns, err)
	ns, err = namespaces.Patch(ctx, "applied", types.ApplyPatchType, []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"applied"}}`), metav1.PatchOptions{FieldManager: "m"})
	if err != nil || ns.Labels[corev1.LabelMetadataName] != "applied" || ns.Status.Phase != corev1.NamespaceActive {
		t.Fatalf("apply: %v %+v", err, ns)
	}
}
