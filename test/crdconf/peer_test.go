package crdconf

import (
	"context"
	"net/http"
	"os"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

// The kube-apiserver to record from (hack/crd-conformance.sh starts one):
// its kubeconfig, and its etcd's client URL for the seeded objects.
const (
	peerKubeconfigEnv = "APILOOM_CRDCONF_PEER_KUBECONFIG"
	peerEtcdEnv       = "APILOOM_CRDCONF_PEER_ETCD"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// TestRecordKubeAPIServer applies the CRDs of testdata/crd to a real
// kube-apiserver, runs the table against it in a fresh namespace and
// writes every answer to testdata/golden.yaml. It runs only when
// APILOOM_CRDCONF_PEER_KUBECONFIG and APILOOM_CRDCONF_PEER_ETCD are set
// (make crd-conformance sets them).
func TestRecordKubeAPIServer(t *testing.T) {
	kc, etcdURL := os.Getenv(peerKubeconfigEnv), os.Getenv(peerEtcdEnv)
	if kc == "" || etcdURL == "" {
		t.Skipf("%s and %s are not set (make crd-conformance sets them)", peerKubeconfigEnv, peerEtcdEnv)
	}
	cases := mustLoadCases(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	dyn := dynamic.NewForConfigOrDie(cfg)
	for _, f := range crdFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		crd := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &crd.Object); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if _, err := dyn.Resource(crdResource).Apply(ctx, crd.GetName(), crd,
			metav1.ApplyOptions{FieldManager: "crdconf", Force: true}); err != nil {
			t.Fatalf("apply %s: %v", f, err)
		}
		waitEstablished(ctx, t, dyn, crd.GetName())
	}

	ns := "crdconf-" + rand.String(6)
	if _, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Namespaces().Create(ctx,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	etcd, err := clientv3.New(clientv3.Config{Endpoints: []string{etcdURL}, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer etcd.Close()
	tg, err := newTarget(cfg, ns, func(ctx context.Context, key, value string) error {
		_, err := etcd.Put(ctx, key, value)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// Established says the CRD is served; wait until its list answers too.
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		code, _, err := tg.send(ctx, http.MethodGet, tg.path("", ""), "", nil)
		return err == nil && code == http.StatusOK, nil
	}); err != nil {
		t.Fatalf("the widgets of %s are not served: %v", ns, err)
	}
	outcomes, err := runCases(ctx, tg, cases)
	if err != nil {
		t.Fatal(err)
	}
	writeGolden(t, outcomes)
	t.Logf("recorded %d cases in %s", len(outcomes), goldenFile)
}

func waitEstablished(ctx context.Context, t *testing.T, dyn dynamic.Interface, name string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		crd, err := dyn.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "Established" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("CRD %s not established: %v", name, err)
	}
}
