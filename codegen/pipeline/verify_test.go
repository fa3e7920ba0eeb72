package pipeline

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestDiffTrees(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	put := func(dir, name, content string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put(a, "same.go", "x")
	put(b, "same.go", "x")
	put(a, "v1/changed.go", "old")
	put(b, "v1/changed.go", "new")
	put(a, "gone.go", "x")
	put(b, "new.go", "x")
	got, err := diffTrees(a, b, "generated")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"generated/gone.go: not generated any more", "generated/new.go: missing", "generated/v1/changed.go: differs"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if got, err := diffTrees(filepath.Join(a, "absent"), filepath.Join(b, "absent"), "x"); err != nil || len(got) != 0 {
		t.Fatalf("two absent trees: %q, %v", got, err)
	}
}

// TestCopyModuleMakesReplacesAbsolute: a scratch copy of a module whose
// go.mod replaces a module by a relative path must still find it.
func TestCopyModuleMakesReplacesAbsolute(t *testing.T) {
	root, dst := t.TempDir(), t.TempDir()
	gomod := "module example.com/shop\n\ngo 1.26.0\n\nreplace github.com/apiloom/apiloom => ../apiloom\n\nreplace example.com/pinned => example.com/fork v1.2.3\n"
	for name, content := range map[string]string{
		"go.mod":                gomod,
		"apis/shop/v1/types.go": "package v1\n",
		".apiloom/etcd/db":      "data",
		"bin/apiserver":         "binary",
	} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := copyModule(root, dst); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dst, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "github.com/apiloom/apiloom => " + filepath.Join(root, "../apiloom"); !strings.Contains(string(got), want) {
		t.Fatalf("go.mod of the copy lacks %q:\n%s", want, got)
	}
	if !strings.Contains(string(got), "example.com/pinned => example.com/fork v1.2.3") {
		t.Fatalf("a module replace was changed:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(dst, "apis/shop/v1/types.go")); err != nil {
		t.Fatal("source not copied")
	}
	for _, skipped := range []string{".apiloom", "bin"} {
		if _, err := os.Stat(filepath.Join(dst, skipped)); !os.IsNotExist(err) {
			t.Fatalf("%s copied: %v", skipped, err)
		}
	}
}
