package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apiloom/apiloom/internal/testenv"
)

// TestImageAndManifestsTargets renders the files loom init writes and runs
// make -n for the targets that build the image and write deploy/: the
// image build gets the apiloom checkout go.mod's replace points at, and
// the manifests the image and the namespace given to make.
func TestImageAndManifestsTargets(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		testenv.Unavailable(t, "make not on PATH: %v", err)
	}
	checkout, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	data := initData{Module: "example.com/shop", Name: "shop", DeployName: deployName("example.com/shop")}
	if err := resolveApiloom(&data, checkout); err != nil {
		t.Fatal(err)
	}
	files, err := initFiles(&data)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := writeFiles(dir, files, io.Discard); err != nil {
		t.Fatal(err)
	}

	makeRun := func(args ...string) string {
		t.Helper()
		// Under make test this make is a sub-make, which would print
		// the directories it enters (and inherit the outer flags).
		cmd := exec.CommandContext(t.Context(), "make", append([]string{"--no-print-directory"}, args...)...)
		cmd.Dir = dir
		cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
			return strings.HasPrefix(kv, "MAKEFLAGS=") || strings.HasPrefix(kv, "MFLAGS=") || strings.HasPrefix(kv, "MAKELEVEL=")
		})
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("make -n %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	makeN := func(args ...string) string { t.Helper(); return makeRun(append([]string{"-n"}, args...)...) }
	if got, want := makeN("image"), "docker build --build-context apiloom="+checkout+" -t shop:dev ."; got != want {
		t.Errorf("make -n image:\n got %s\nwant %s", got, want)
	}
	if got, want := makeN("manifests", "IMG=registry.example.com/shop:v1", "NAMESPACE=shops"),
		"go tool loom manifests --image registry.example.com/shop:v1 --namespace shops"; got != want {
		t.Errorf("make -n manifests:\n got %s\nwant %s", got, want)
	}
	if got, want := makeN("manifests"), "go tool loom manifests --image shop:dev"; got != want {
		t.Errorf("make -n manifests:\n got %s\nwant %s", got, want)
	}
	if help := makeRun("help"); !strings.Contains(help, "manifests") || !strings.Contains(help, "image") {
		t.Errorf("make help lists neither manifests nor image:\n%s", help)
	}

	// The Dockerfile builds the server main loom init writes, on the Go
	// the module requires, and the image runs as the StatefulSet's user.
	dockerfile, dockerignore := readFile(t, dir, "Dockerfile"), readFile(t, dir, ".dockerignore")
	for _, want := range []string{
		"ARG GO_VERSION=" + strings.Join(strings.Split(data.GoVersion, ".")[:2], "."),
		"FROM scratch AS apiloom", "COPY --from=apiloom . /apiloom/",
		"go mod edit -replace=github.com/apiloom/apiloom=/apiloom",
		"CGO_ENABLED=0 go build -trimpath -o /out/apiserver ./cmd/apiserver",
		"FROM gcr.io/distroless/static:nonroot", "USER 65532:65532", `ENTRYPOINT ["/apiserver"]`,
	} {
		if !strings.Contains(string(dockerfile), want) {
			t.Errorf("Dockerfile lacks %q:\n%s", want, dockerfile)
		}
	}
	if !strings.Contains(string(readFile(t, dir, "cmd/apiserver/main.go")), "package main") {
		t.Errorf("cmd/apiserver is not the server's main package")
	}
	for _, want := range []string{"deploy", ".git", "bin"} {
		if !strings.Contains("\n"+string(dockerignore)+"\n", "\n"+want+"\n") {
			t.Errorf(".dockerignore lacks %s:\n%s", want, dockerignore)
		}
	}
	if !strings.Contains(string(readFile(t, dir, ".gitignore")), "/deploy/pki/\n") {
		t.Errorf(".gitignore of a new module lacks /deploy/pki/")
	}
	if readme := string(readFile(t, dir, "README.md")); !strings.Contains(readme, "## Deploy into a cluster") || !strings.Contains(readme, "kubectl apply -f deploy/") {
		t.Errorf("README.md lacks the deploy section")
	}
}
