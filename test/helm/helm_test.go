// Package helm runs Helm v3 and Helm v4, built from the Go module proxy
// (hack/ensure-helm.sh), against a real apiloom on embedded etcd: a chart
// of built-in kinds and apiloom's example kinds (testdata/chart) is
// installed, upgraded, rolled back, upgraded with --atomic and uninstalled
// with Helm's default storage driver, its release records in Secrets, and
// the server's state is checked with client-go after each step. It is a
// module of its own so that Helm's place in CI costs apiloom's go.mod
// nothing (docs/helm.md).
package helm

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/apiloom/apiloom/generated/apiserver"
	"github.com/apiloom/apiloom/generated/clientset/versioned"
	"github.com/apiloom/apiloom/internal/testenv"
	"github.com/apiloom/apiloom/server/testserver"
)

// The environment variables that name the Helm binaries under test;
// make test-helm sets them from hack/ensure-helm.sh. Without one, its
// test skips, or fails under APILOOM_CI=1.
const (
	helm3Env = "APILOOM_HELM3"
	helm4Env = "APILOOM_HELM4"
)

// kubeconfigEnv names a kubeconfig of a server to run against instead of
// starting apiloom: to check the test's expectations against
// kube-apiserver serving hack/peer-crds (docs/helm.md).
const kubeconfigEnv = "APILOOM_HELM_KUBECONFIG"

// TestHelm runs the release lifecycle with each Helm, in parallel, each in
// a namespace of its own on one server.
func TestHelm(t *testing.T) {
	helms := []struct {
		env   string
		major int
	}{{helm3Env, 3}, {helm4Env, 4}}
	kubeconfig, cfg := server(t)
	for _, h := range helms {
		name := "v" + string(rune('0'+h.major))
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			bin := os.Getenv(h.env)
			if bin == "" {
				testenv.Unavailable(t, "%s is not set: make test-helm sets it (hack/ensure-helm.sh builds Helm v%d)", h.env, h.major)
			}
			if _, err := os.Stat(bin); err != nil {
				testenv.Unavailable(t, "%s=%s: %v", h.env, bin, err)
			}
			ns := "helm-" + name
			c := newChecker(t, cfg, ns)
			createNamespace(t, c.kube, ns)
			lifecycle(t, newHelmCLI(t, bin, h.major, kubeconfig, ns), c, "loom-"+name)
		})
	}
}

// lifecycle takes release through install, upgrade, history, rollback,
// upgrade --install with rollback on failure (one that succeeds and one
// the server refuses), list and uninstall, checking the objects and the
// release records after each step.
func lifecycle(t *testing.T, helm *helmCLI, c *checker, release string) {
	chart, err := filepath.Abs(filepath.Join("testdata", "chart"))
	if err != nil {
		t.Fatal(err)
	}

	// 1. install: revision 1 deployed.
	helm.run(t, "install", release, chart)
	c.expectObjects(t, release, defaults)
	c.expectRecords(t, release, map[int]string{1: "deployed"})

	// 2. upgrade with changed values: every kind is updated.
	upgraded := chartValues{greeting: "bonjour", password: "geheim", replicas: 3, user: "bob"}
	helm.run(t, "upgrade", release, chart,
		"--set", "greeting=bonjour", "--set", "password=geheim", "--set", "replicas=3", "--set", "user=bob")
	c.expectObjects(t, release, upgraded)
	c.expectRecords(t, release, map[int]string{1: "superseded", 2: "deployed"})

	// 3. history: the two revisions.
	hist := helm.history(t, release)
	if len(hist) != 2 || hist[0].Revision != 1 || hist[0].Status != "superseded" || hist[1].Revision != 2 || hist[1].Status != "deployed" {
		t.Errorf("helm history: %+v, want revision 1 superseded and 2 deployed", hist)
	}

	// 4. rollback to 1: revision 3 deployed with revision 1's values.
	helm.run(t, "rollback", release, "1")
	c.expectObjects(t, release, defaults)
	c.expectRecords(t, release, map[int]string{1: "superseded", 2: "superseded", 3: "deployed"})

	// 5. upgrade --install --atomic --wait of an installed release:
	// revision 4.
	hola := chartValues{greeting: "hola", password: "s3cret", replicas: 2, user: "alice"}
	helm.run(t, "upgrade", "--install", release, chart, helm.atomicFlag(), "--wait", "--timeout", "2m",
		"--set", "greeting=hola", "--set", "replicas=2")
	c.expectObjects(t, release, hola)
	c.expectRecords(t, release, map[int]string{1: "superseded", 2: "superseded", 3: "superseded", 4: "deployed"})

	// 6. the same with a value the server refuses (a Database has at
	// most 9 replicas): revision 5 fails, Helm rolls back to 4's
	// manifest as revision 6, and the ConfigMap it had changed before
	// the Database is as revision 4 left it.
	out, err := helm.try(t, "upgrade", "--install", release, chart, helm.atomicFlag(), "--wait", "--timeout", "2m",
		"--set", "greeting=oops", "--set", "replicas=12")
	if err == nil {
		t.Fatalf("helm upgrade with replicas=12 succeeded: %s", out)
	}
	c.expectObjects(t, release, hola)
	c.expectRecords(t, release, map[int]string{1: "superseded", 2: "superseded", 3: "superseded", 4: "superseded", 5: "failed", 6: "deployed"})

	// 7. list: the release at revision 6, deployed.
	list := helm.list(t)
	if len(list) != 1 || list[0].Name != release || list[0].Namespace != c.namespace || list[0].Revision != "6" || list[0].Status != "deployed" {
		t.Errorf("helm list: %+v, want %s revision 6 deployed", list, release)
	}

	// 8. uninstall: the objects and the release records are gone.
	helm.run(t, "uninstall", release)
	c.expectGone(t, release)
	c.expectRecords(t, release, map[int]string{})
	if list := helm.list(t); len(list) != 0 {
		t.Errorf("helm list after uninstall: %+v, want none", list)
	}
	if out, err := helm.try(t, "status", release); err == nil {
		t.Errorf("helm status after uninstall succeeded: %s", out)
	}
}

// server starts apiloom (or takes the server kubeconfigEnv names) and
// returns an admin kubeconfig's path and a client config of the same server.
func server(t *testing.T) (string, *rest.Config) {
	if path := os.Getenv(kubeconfigEnv); path != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", path)
		if err != nil {
			t.Fatalf("%s=%s: %v", kubeconfigEnv, path, err)
		}
		return path, cfg
	}
	ts := testserver.Start(t, apiserver.Install)
	return ts.Kubeconfig, ts.Config
}

func newChecker(t *testing.T, cfg *rest.Config, namespace string) *checker {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	apiloom, err := versioned.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &checker{kube: kube, apiloom: apiloom, namespace: namespace}
}
