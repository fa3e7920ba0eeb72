package deploy

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/apiloom/apiloom/internal/hostcluster"
	"github.com/apiloom/apiloom/internal/testenv"
)

// TestManifestsDryRunOnHost writes deploy/ for a module with three group
// versions in two groups and has a real kube-apiserver validate it: with
// the namespace created, kubectl apply --server-side --dry-run=server -R
// -f deploy/ must apply every object and refuse none.
func TestManifestsDryRunOnHost(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		testenv.Unavailable(t, "kubectl not on PATH: %v", err)
	}
	host := hostcluster.Start(t, hostcluster.Options{RBAC: true})

	checkout, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	loom := filepath.Join(t.TempDir(), "loom")
	run(t, checkout, "go", "build", "-o", loom, "./cmd/loom")
	mod := t.TempDir()
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/shop\n\ngo 1.26.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, gvk := range [][3]string{
		{"shop.example.com", "v1", "Order"}, {"shop.example.com", "v1beta1", "Cart"}, {"billing.example.com", "v1alpha1", "Invoice"},
	} {
		run(t, mod, loom, "create", "api", "--group", gvk[0], "--version", gvk[1], "--kind", gvk[2])
	}
	run(t, mod, loom, "manifests")
	docs := documents(t, filepath.Join(mod, "deploy"))

	var ns corev1.Namespace
	if err := yaml.UnmarshalStrict(docs["Namespace"][0], &ns); err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(host.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Namespaces().Create(t.Context(), &ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", ns.Name, err)
	}

	out := run(t, mod, kubectl, "--kubeconfig", host.KubeconfigPath, "apply", "--server-side", "--dry-run=server", "-R", "-f", "deploy/")
	n := 0
	for _, ds := range docs {
		n += len(ds)
	}
	if got := strings.Count(out, "serverside-applied (server dry run)"); got != n {
		t.Errorf("%d objects applied, deploy/ has %d:\n%s", got, n, out)
	}
	if len(docs["APIService"]) != 3 {
		t.Fatalf("%d APIServices, want one per group version (3)", len(docs["APIService"]))
	}
	for _, doc := range docs["APIService"] {
		var as metav1.PartialObjectMetadata
		if err := yaml.Unmarshal(doc, &as); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "apiservice.apiregistration.k8s.io/"+as.Name+" serverside-applied (server dry run)") {
			t.Errorf("APIService %s not applied:\n%s", as.Name, out)
		}
	}

	// A dry run: nothing was stored.
	dyn, err := dynamic.NewForConfig(host.Config)
	if err != nil {
		t.Fatal(err)
	}
	apiServices := schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	if _, err := dyn.Resource(apiServices).Get(t.Context(), "v1.shop.example.com", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after a dry run, APIService v1.shop.example.com: want NotFound, got %v", err)
	}
}

// documents returns the YAML documents of dir/*.yaml by kind.
func documents(t *testing.T, dir string) map[string][][]byte {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string][][]byte{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			var tm metav1.TypeMeta
			if err := yaml.Unmarshal(doc, &tm); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if tm.Kind != "" {
				docs[tm.Kind] = append(docs[tm.Kind], doc)
			}
		}
	}
	return docs
}

// run runs a command in dir and returns its output; a failure ends t.
func run(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return string(out)
}
