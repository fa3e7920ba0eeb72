package builtinconf

import (
	"context"
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/tools/clientcmd"
)

// peerKubeconfigEnv names the kubeconfig of the kube-apiserver to record
// from (hack/builtin-conformance.sh starts one, with
// kube-controller-manager's namespace and garbage-collector controllers).
const peerKubeconfigEnv = "APILOOM_BUILTINCONF_PEER_KUBECONFIG"

// TestRecordKubeAPIServer runs the table against a real kube-apiserver
// and writes every answer to testdata/golden.yaml. It runs only when
// APILOOM_BUILTINCONF_PEER_KUBECONFIG is set (make builtin-conformance
// sets it).
func TestRecordKubeAPIServer(t *testing.T) {
	kc := os.Getenv(peerKubeconfigEnv)
	if kc == "" {
		t.Skipf("%s is not set (make builtin-conformance sets it)", peerKubeconfigEnv)
	}
	cases := mustLoadCases(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := newTarget(cfg, rand.String(8))
	if err != nil {
		t.Fatal(err)
	}
	defer deleteNamespaces(context.WithoutCancel(t.Context()), tg, len(cases))
	outcomes, err := runCases(t.Context(), tg, cases)
	if err != nil {
		t.Fatal(err)
	}
	writeGolden(t, outcomes)
	t.Logf("recorded %d cases in %s", len(outcomes), goldenFile)
}
