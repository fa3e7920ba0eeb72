package hostcluster

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

func clientset(t *testing.T, cfg *rest.Config) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestHost checks the host cluster is what the aggregated-mode tests rely
// on: a v1.37 kube-apiserver, the front proxy published for extension
// servers as kubeadm publishes it, RBAC in force for token users, and x509
// client certificates accepted.
func TestHost(t *testing.T) {
	c := Start(t, Options{RBAC: true, Tokens: []Token{{Token: "alicetoken", User: "alice", UID: "alice-uid", Groups: []string{"dev"}}}})
	admin := clientset(t, c.Config)
	ctx := t.Context()

	v, err := admin.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(v.GitVersion, "v1.37.") {
		t.Errorf("gitVersion %q, want v1.37.x", v.GitVersion)
	}

	cm, err := admin.CoreV1().ConfigMaps("kube-system").Get(ctx, "extension-apiserver-authentication", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ca := cm.Data["requestheader-client-ca-file"]; !strings.Contains(ca, strings.TrimSpace(string(c.FrontProxyCAPEM))) {
		t.Errorf("requestheader-client-ca-file is not our front-proxy CA:\n%s", ca)
	}
	var names []string
	if err := json.Unmarshal([]byte(cm.Data["requestheader-allowed-names"]), &names); err != nil {
		t.Fatalf("requestheader-allowed-names %q: %v", cm.Data["requestheader-allowed-names"], err)
	}
	if len(names) != 1 || names[0] != "front-proxy-client" {
		t.Errorf("requestheader-allowed-names %q, want [front-proxy-client]", names)
	}
	if cm.Data["client-ca-file"] == "" {
		t.Error("no client-ca-file in extension-apiserver-authentication")
	}

	if _, err := admin.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("admin lists secrets: %v", err)
	}
	_, err = clientset(t, c.UserConfig("alicetoken")).CoreV1().Secrets("default").List(ctx, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("alice lists secrets: %v, want Forbidden", err)
	}
	_, err = clientset(t, c.UserConfig("nosuchtoken")).CoreV1().Secrets("default").List(ctx, metav1.ListOptions{})
	if !apierrors.IsUnauthorized(err) {
		t.Errorf("unknown token lists secrets: %v, want Unauthorized", err)
	}

	// x509: a system:masters certificate is allowed, one without is not.
	crt, key := c.ClientCert(t, "carol", "system:masters")
	certCfg := &rest.Config{Host: c.Host, TLSClientConfig: rest.TLSClientConfig{CAData: c.ServerCAPEM, CertData: crt, KeyData: key}}
	if _, err := clientset(t, certCfg).CoreV1().Secrets("default").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("carol (x509, system:masters) lists secrets: %v", err)
	}
	crt, key = c.ClientCert(t, "dave")
	certCfg.CertData, certCfg.KeyData = crt, key
	if _, err := clientset(t, certCfg).CoreV1().Secrets("default").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("dave (x509) lists secrets: %v, want Forbidden", err)
	}

	// The kubeconfig verifies the server: it carries our CA, not insecure-skip.
	kc := c.KubectlKubeconfig(t, "alicetoken")
	if data := readFile(t, kc); !bytes.Contains(data, []byte("certificate-authority-data")) || bytes.Contains(data, []byte("insecure")) {
		t.Errorf("kubeconfig %s does not verify the server:\n%s", kc, data)
	}
}

// TestWaitAPIServiceAvailable checks the wait sees a local APIService as
// Available and reports why one whose Service does not exist is not.
func TestWaitAPIServiceAvailable(t *testing.T) {
	c := Start(t, Options{})
	c.WaitAPIServiceAvailable(t, "v1.apps", 30*time.Second)

	client, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	svc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1",
		"kind":       "APIService",
		"metadata":   map[string]any{"name": "v1.nowhere.example.com"},
		"spec": map[string]any{
			"group": "nowhere.example.com", "version": "v1",
			"service":               map[string]any{"namespace": "default", "name": "nowhere", "port": int64(443)},
			"insecureSkipTLSVerify": true, "groupPriorityMinimum": int64(1000), "versionPriority": int64(15),
		},
	}}
	if _, err := client.Resource(apiServices).Create(t.Context(), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = c.waitAPIServiceAvailable(t.Context(), "v1.nowhere.example.com", 3*time.Second)
	if err == nil || !strings.Contains(err.Error(), "Available=False") {
		t.Fatalf("wait for an APIService without a Service: %v, want Available=False", err)
	}
	t.Log(err)
}

// TestHostKCM checks kube-controller-manager runs the namespace controller:
// a deleted namespace with content goes away only if it does.
func TestHostKCM(t *testing.T) {
	c := Start(t, Options{KCM: true})
	cs := clientset(t, c.Config)
	ctx := t.Context()
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "gone-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns.Name).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		got, err := cs.CoreV1().Namespaces().Get(wctx, ns.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		select {
		case <-wctx.Done():
			t.Fatalf("namespace %s still there after 60s: %+v, %v", ns.Name, got.Status, err)
		case <-tick.C:
		}
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
