package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// TestNamespacesMatchKubeAPIServer makes the same namespace lifecycle
// requests of apiloom and of a kube-apiserver with
// kube-controller-manager's namespace controller (APILOOM_PEER_KUBECONFIG,
// started with PEER_KCM=1) and requires the same answers: the 404 for a
// missing namespace, the 403s for a system namespace's DELETE and for a
// create into a Terminating namespace (causes included), the DELETE's 200
// with the namespace Terminating, the deletion conditions while a
// finalizer holds the content, and the namespace's removal once it goes.
func TestNamespacesMatchKubeAPIServer(t *testing.T) {
	path := os.Getenv(peerEnv)
	if path == "" {
		t.Skip(peerEnv + " is not set")
	}
	peerCfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	ts, _ := startServer(t)
	targets := []struct {
		name string
		cfg  *rest.Config
	}{{"apiloom", ts.Config}, {"kube-apiserver", peerCfg}}
	ns := "nsdiff-" + rand.String(6)
	cm := func(name, finalizers string) string {
		return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `","finalizers":[` + finalizers + `]}}`
	}
	steps := []rawRequest{
		{name: "create in a missing namespace", method: "POST", path: "/api/v1/namespaces/nope-" + ns + "/configmaps", contentType: "application/json", body: cm("c", "")},
		{name: "delete default", method: "DELETE", path: "/api/v1/namespaces/default"},
		{name: "delete kube-system", method: "DELETE", path: "/api/v1/namespaces/kube-system"},
		{name: "delete kube-public", method: "DELETE", path: "/api/v1/namespaces/kube-public"},
		{name: "create the namespace", method: "POST", path: "/api/v1/namespaces", contentType: "application/json", body: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"` + ns + `"}}`},
		{name: "create held content", method: "POST", path: "/api/v1/namespaces/" + ns + "/configmaps", contentType: "application/json", body: cm("held", `"example.com/hold"`)},
		{name: "delete the namespace", method: "DELETE", path: "/api/v1/namespaces/" + ns},
		{name: "create in the terminating namespace", method: "POST", path: "/api/v1/namespaces/" + ns + "/configmaps", contentType: "application/json", body: cm("late", "")},
		{name: "delete the namespace again", method: "DELETE", path: "/api/v1/namespaces/" + ns},
	}
	answers := make([][]rawAnswer, len(targets))
	for i, target := range targets {
		c := newRawClient(t, target.cfg)
		for _, s := range steps {
			answers[i] = append(answers[i], lifecycleView(c.do(t, s)))
		}
	}
	for j, s := range steps {
		if !reflect.DeepEqual(answers[0][j], answers[1][j]) {
			t.Errorf("%s:\napiloom:        %s\nkube-apiserver: %s", s.name, jsonString(answers[0][j]), jsonString(answers[1][j]))
		}
	}

	// The deletion conditions while the finalizer holds the content.
	conditions := make([]string, len(targets))
	for i, target := range targets {
		kc := kubernetes.NewForConfigOrDie(target.cfg)
		eventually(t, target.name+"'s namespace conditions", func(ctx context.Context) (bool, error) {
			got, err := kc.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			conditions[i] = conditionsView(got.Status.Conditions)
			return len(got.Status.Conditions) == 5, fmt.Errorf("conditions %s", conditions[i])
		})
	}
	if conditions[0] != conditions[1] {
		t.Errorf("conditions:\napiloom:        %s\nkube-apiserver: %s", conditions[0], conditions[1])
	}
	for _, target := range targets {
		kc := kubernetes.NewForConfigOrDie(target.cfg)
		if _, err := kc.CoreV1().ConfigMaps(ns).Patch(t.Context(), "held", "application/merge-patch+json",
			[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
			t.Fatalf("%s: %v", target.name, err)
		}
		waitNamespaceGone(t, kc, ns)
	}
}

// lifecycleView is what is compared of an answer: a Status or another
// object whole (normalised, but for metadata.generation), a namespace by
// its name, phase, finalizers, name label and whether its deletion was
// requested.
func lifecycleView(a rawAnswer) rawAnswer {
	m, ok := a.Body.(map[string]any)
	if !ok {
		return a
	}
	if m["kind"] != "Namespace" {
		// Every kind here has a generation (docs/builtins.md).
		if meta, ok := m["metadata"].(map[string]any); ok {
			delete(meta, "generation")
		}
		return a
	}
	data, _ := json.Marshal(m)
	var ns corev1.Namespace
	_ = json.Unmarshal(data, &ns)
	a.Body = map[string]any{"name": ns.Name, "phase": string(ns.Status.Phase), "finalizers": fmt.Sprint(ns.Spec.Finalizers),
		"deleting": ns.DeletionTimestamp != nil, "label": ns.Labels[corev1.LabelMetadataName]}
	return a
}

// conditionsView is the conditions' types, statuses, reasons and
// messages, sorted.
func conditionsView(cs []corev1.NamespaceCondition) string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%s=%s %s %q", c.Type, c.Status, c.Reason, c.Message))
	}
	sort.Strings(out)
	return fmt.Sprint(out)
}

func jsonString(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}
