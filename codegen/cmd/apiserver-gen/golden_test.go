package main

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiloom/apiloom/codegen/cmd/apiserver-gen/args"
	"github.com/apiloom/apiloom/codegen/cmd/apiserver-gen/generators"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the generator's output")

const (
	// testdataPkg is the import path of ./testdata. The go command skips
	// testdata directories in ./... patterns, but loads them when named.
	testdataPkg = "github.com/apiloom/apiloom/codegen/cmd/apiserver-gen/testdata"
	goldenDir   = "testdata/golden"
)

// inputs are the golden test's API packages. Their zz_generated.deepcopy.go
// files (and testdata/invalid/v1's) come from deepcopy-gen; after changing
// the types, rerun from this directory:
//
//	deepcopy-gen --go-header-file ../../../hack/boilerplate.go.txt \
//	  --output-file zz_generated.deepcopy.go ./testdata/apis/shop/v1 \
//	  ./testdata/apis/inventory/v1alpha1 ./testdata/apis/gadgets/v1 ./testdata/invalid/v1 \
//	  ./testdata/invalid/scale/v1
var inputs = []string{"./testdata/apis/shop/v1", "./testdata/apis/inventory/v1alpha1", "./testdata/apis/gadgets/v1"}

// TestGolden generates from testdata/apis and compares the result with
// testdata/golden file by file. Run with -update to accept new output.
func TestGolden(t *testing.T) {
	out := t.TempDir()
	if *update {
		out = goldenDir
		if err := os.RemoveAll(out); err != nil {
			t.Fatal(err)
		}
	}
	a := args.New()
	a.OutputDir = out
	a.OutputPkg = testdataPkg + "/golden"
	a.OpenAPIPkg = testdataPkg + "/openapi"
	a.GoHeaderFile = "../../../hack/boilerplate.go.txt"
	// Outside testdata, which a hooks-pkg/... pattern would skip.
	a.HooksPkg = "github.com/apiloom/apiloom/codegen/cmd/apiserver-gen/internal/goldenhooks"
	if err := generators.Run(a, inputs); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if *update {
		return
	}

	got, want := readTree(t, out), readTree(t, goldenDir)
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			t.Errorf("%s: not generated", name)
			continue
		}
		if d := firstDifference(g, w); d != "" {
			t.Errorf("%s differs from the golden file (rerun with -update if intended):\n%s", name, d)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: generated but has no golden file", name)
		}
	}
}

// TestGoldenCompiles vets the golden output against the real server
// packages, so a template that emits invalid Go fails here, and runs
// testdata/behavior, which calls the generated functions.
func TestGoldenCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	for _, c := range [][]string{
		{"vet", "./" + goldenDir + "/..."},
		{"test", "-count=1", "./testdata/behavior"},
	} {
		if out, err := exec.Command("go", c...).CombinedOutput(); err != nil {
			t.Errorf("go %s: %v\n%s", strings.Join(c, " "), err, out)
		}
	}
}

// readTree returns every file under dir by slash-separated relative path.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// firstDifference describes the first line where got and want differ, or
// returns "" when they are equal.
func firstDifference(got, want []byte) string {
	if bytes.Equal(got, want) {
		return ""
	}
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl || i >= len(g) || i >= len(w) {
			return fmt.Sprintf("line %d:\n  got:  %q\n  want: %q", i+1, gl, wl)
		}
	}
	return "files differ"
}
