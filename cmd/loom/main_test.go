package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// snapshot is every file and directory under dir, with its mode and
// content, as one comparable string.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b.WriteString(rel + " " + info.Mode().String() + "\n")
		if info.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b.Write(data)
			b.WriteString("\n--\n")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// loom runs the command in dir and returns its exit status and output.
func loom(t *testing.T, dir string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(t.Context(), dir, args, &o, &e)
	return code, o.String(), e.String()
}

// shopModule returns a directory holding a module with the kind Order in
// shop.example.com/v1, written by create api.
func shopModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/shop\n\ngo 1.26.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := loom(t, dir, "create", "api", "--group", "shop.example.com", "--version", "v1", "--kind", "Order"); code != 0 {
		t.Fatalf("create api: exit %d: %s", code, stderr)
	}
	return dir
}

func TestCreateAPIWrites(t *testing.T) {
	dir := shopModule(t)
	for _, f := range []string{
		"apis/shop/v1/doc.go", "apis/shop/v1/order_types.go",
		"test/shop_v1_order_test.go", "examples/shop_v1_order.yaml",
	} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("create api did not write %s: %v", f, err)
		}
	}
	// A second kind in the same group version adds its files, not doc.go.
	before, _ := os.ReadFile(filepath.Join(dir, "apis/shop/v1/doc.go"))
	if code, _, stderr := loom(t, dir, "create", "api", "--group", "shop.example.com", "--version", "v1", "--kind", "Customer", "--namespaced=false"); code != 0 {
		t.Fatalf("second kind: exit %d: %s", code, stderr)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "apis/shop/v1/doc.go"))
	if !bytes.Equal(before, after) {
		t.Fatalf("doc.go rewritten by the second kind")
	}
	types, err := os.ReadFile(filepath.Join(dir, "apis/shop/v1/customer_types.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"+genclient:nonNamespaced", "+kubebuilder:resource:scope=Cluster", "type CustomerList struct"} {
		if !strings.Contains(string(types), want) {
			t.Errorf("customer_types.go lacks %q", want)
		}
	}
	test, _ := os.ReadFile(filepath.Join(dir, "test/shop_v1_customer_test.go"))
	if !strings.Contains(string(test), "cs.ShopV1().Customers()") {
		t.Errorf("a cluster-scoped kind's test must use Customers() without a namespace:\n%s", test)
	}
	// The test and the example survive the user's replacing the spec's
	// placeholder field only if they do not name it (issue 32).
	example, _ := os.ReadFile(filepath.Join(dir, "examples/shop_v1_customer.yaml"))
	for name, content := range map[string][]byte{"test": test, "example": example} {
		if strings.Contains(strings.ToLower(string(content)), "description") {
			t.Errorf("the %s names the spec's placeholder field description:\n%s", name, content)
		}
	}
}

// TestBadInputChangesNothing runs each refused command line and checks the
// exit status, that the error is one line naming the rule, and that the
// directory is byte-for-byte what it was.
func TestBadInputChangesNothing(t *testing.T) {
	mod := shopModule(t)
	// Another version of the group, for the several-versions refusal.
	if code, _, stderr := loom(t, mod, "create", "api", "--group", "shop.example.com", "--version", "v2", "--kind", "Cart"); code != 0 {
		t.Fatalf("create api: exit %d: %s", code, stderr)
	}
	notApiloom := t.TempDir()
	if err := os.WriteFile(filepath.Join(notApiloom, "go.mod"), []byte("module example.com/other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	api := func(group, version, kind string) []string {
		return []string{"create", "api", "--group", group, "--version", version, "--kind", kind}
	}
	for _, tc := range []struct {
		name string
		dir  string // "" for an empty directory
		args []string
		rule string
	}{
		{"init non-empty", mod, []string{"init", "--module", "example.com/shop", "--apiloom", "../.."}, "is not empty"},
		{"init no module", "", []string{"init"}, "--module is required"},
		{"init module without dot", "", []string{"init", "--module", "shop"}, "a module path must be a valid Go module path"},
		{"init module bad chars", "", []string{"init", "--module", "example.com/sh op"}, "a module path must be a valid Go module path"},
		{"init not apiloom", "", []string{"init", "--module", "example.com/shop", "--apiloom", notApiloom}, "it must be an apiloom checkout"},
		{"init unknown flag", "", []string{"init", "--modul", "example.com/shop"}, "unknown flag: --modul"},
		{"init positional", "", []string{"init", "example.com/shop"}, "every input is a flag"},
		{"no subcommand", "", []string{"create"}, "loom init --module"},
		{"create outside a module", "", api("shop.example.com", "v1", "Order"), "no go.mod"},
		{"group without dot", mod, api("shop", "v1", "Thing"), "with at least one dot"},
		{"group uppercase", mod, api("Shop.example.com", "v1", "Thing"), "a group must be a DNS subdomain"},
		{"group underscore", mod, api("my_shop.example.com", "v1", "Thing"), "a group must be a DNS subdomain"},
		{"group label with dash", mod, api("my-shop.example.com", "v1", "Thing"), "its first label names the directory"},
		{"group missing", mod, []string{"create", "api", "--version", "v1", "--kind", "Thing"}, "--group is required"},
		{"version no v", mod, api("shop.example.com", "1", "Thing"), "Kubernetes' form"},
		{"version dotted", mod, api("shop.example.com", "v1.0", "Thing"), "Kubernetes' form"},
		{"version leading zero", mod, api("shop.example.com", "v01", "Thing"), "Kubernetes' form"},
		{"version gamma", mod, api("shop.example.com", "v1gamma1", "Thing"), "Kubernetes' form"},
		{"kind lowercase", mod, api("shop.example.com", "v1", "thing"), "UpperCamelCase"},
		{"kind underscore", mod, api("shop.example.com", "v1", "Big_Thing"), "UpperCamelCase"},
		{"kind List", mod, api("shop.example.com", "v1", "ThingList"), "may not end in List"},
		{"kind exists", mod, api("shop.example.com", "v1", "Order"), "kind Order already exists in shop.example.com/v1 (apis/shop/v1/order_types.go)"},
		{"kind in another version", mod, api("shop.example.com", "v1", "Cart"), "needs a storage version and conversions"},
		{"group dir taken", mod, api("shop.other.com", "v1", "Thing"), "apis/shop/v1 already holds group shop.example.com"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.dir
			if dir == "" {
				dir = t.TempDir()
			}
			before := snapshot(t, dir)
			code, stdout, stderr := loom(t, dir, tc.args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr:\n%s", code, stderr)
			}
			if tc.name != "no subcommand" {
				if strings.Count(strings.TrimSuffix(stderr, "\n"), "\n") != 0 || !strings.HasPrefix(stderr, "loom: ") {
					t.Errorf("want one line starting loom:, got:\n%s", stderr)
				}
			}
			if !strings.Contains(stderr, tc.rule) {
				t.Errorf("error does not name the rule %q:\n%s", tc.rule, stderr)
			}
			if stdout != "" {
				t.Errorf("wrote to stdout:\n%s", stdout)
			}
			if after := snapshot(t, dir); after != before {
				t.Errorf("the directory changed")
			}
		})
	}
}
