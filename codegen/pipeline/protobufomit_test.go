package pipeline

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/apiloom/apiloom/internal/testenv"
)

// shopTypes is an API package whose kind Order has spec fields named Size
// and String, as a CRD may: Order, its spec, its list and its status (used
// by nothing else) cannot be protobuf; Item, which shares Shared with
// Order, can.
const shopTypes = `package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Order is a kind.
type Order struct {
	metav1.TypeMeta   ` + "`json:\",inline\"`" + `
	metav1.ObjectMeta ` + "`json:\"metadata,omitempty\"`" + `

	Spec   OrderSpec   ` + "`json:\"spec,omitempty\"`" + `
	Status OrderStatus ` + "`json:\"status,omitempty\"`" + `
}

// OrderSpec has fields named like generated methods.
type OrderSpec struct {
	Size   *int32 ` + "`json:\"size,omitempty\"`" + `
	String string ` + "`json:\"string,omitempty\"`" + `
	Shared Shared ` + "`json:\"shared\"`" + `
}

// OrderStatus is used by Order only.
type OrderStatus struct {
	Phase string ` + "`json:\"phase,omitempty\"`" + `
}

// OrderList is a list of Orders.
type OrderList struct {
	metav1.TypeMeta ` + "`json:\",inline\"`" + `
	metav1.ListMeta ` + "`json:\"metadata,omitempty\"`" + `

	Items []Order ` + "`json:\"items\"`" + `
}

// Shared is held by Order's spec and by Item.
type Shared struct {
	Note string ` + "`json:\"note,omitempty\"`" + `
}

// Item is a kind that keeps protobuf.
type Item struct {
	metav1.TypeMeta   ` + "`json:\",inline\"`" + `
	metav1.ObjectMeta ` + "`json:\"metadata,omitempty\"`" + `

	Shared Shared ` + "`json:\"shared\"`" + `
}

// Skipped is left out by its author.
//
// +protobuf=false
type Skipped struct {
	Reset bool ` + "`json:\"reset\"`" + `
}

type (
	// Grouped is in a group of types.
	Grouped struct{ Marshal bool }
	// Hidden holds a Size field only in a field protobuf skips.
	Hidden struct {
		Order Order ` + "`json:\"order\" protobuf:\"-\"`" + `
		Name  string ` + "`json:\"name\"`" + `
	}
)

type private struct{ Size int }
`

// TestProtobufOmissions: a type with a field named like a generated
// method is left out, every type holding it up to the kind and its list
// too, and a type only they use; a shared type, a type holding one only
// through a protobuf:"-" field, a type marked by its author, unexported
// types and tests and generated files are not listed; an API package
// importing another's type follows it.
func TestProtobufOmissions(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"apis/shop/v1/types.go":               shopTypes,
		"apis/shop/v1/types_test.go":          "package v1\n\ntype T struct{ Size int }\n",
		"apis/shop/v1/zz_generated.ignore.go": "package v1\n\ntype Z struct{ Size int }\n",
		"apis/billing/v1/types.go": "package v1\n\nimport shopv1 \"example.com/shop/apis/shop/v1\"\n\n" +
			"type Invoice struct{ Orders []shopv1.Order }\n\ntype Receipt struct{ XXX_sizecache int32 }\n\ntype Kept struct{ S shopv1.Shared }\n",
	})
	got, err := ProtobufOmissions(root, "example.com/shop", []string{"apis/billing/v1", "apis/shop/v1"})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, o := range got {
		lines = append(lines, o.Pos+" "+o.Type+": "+o.Why)
	}
	want := []string{
		"apis/billing/v1/types.go:5 v1.Invoice: holds v1.Order",
		"apis/billing/v1/types.go:7 v1.Receipt: field XXX_sizecache named like generated.pb.go's methods",
		"apis/shop/v1/types.go:6 v1.Order: holds v1.OrderSpec",
		"apis/shop/v1/types.go:15 v1.OrderSpec: fields Size, String named like generated.pb.go's methods",
		"apis/shop/v1/types.go:22 v1.OrderStatus: used only by types left out (v1.Order)",
		"apis/shop/v1/types.go:27 v1.OrderList: holds v1.Order",
		"apis/shop/v1/types.go:56 v1.Grouped: field Marshal named like generated.pb.go's methods",
	}
	if !reflect.DeepEqual(lines, want) {
		t.Fatalf("got\n  %s\nwant\n  %s", strings.Join(lines, "\n  "), strings.Join(want, "\n  "))
	}
	warning := protobufOmissionWarning(got)
	for _, s := range []string{"apis/shop/v1/types.go:15: v1.OrderSpec", "rename each Go field", "+protobuf=false", "CBOR"} {
		if !strings.Contains(warning, s) {
			t.Errorf("the warning does not say %q:\n%s", s, warning)
		}
	}

	ok := t.TempDir()
	writeTree(t, ok, map[string]string{"apis/shop/v1/types.go": "package v1\n\ntype OrderSpec struct{ SizeGiB int32 }\n"})
	if got, err := ProtobufOmissions(ok, "example.com/shop", []string{"apis/shop/v1"}); err != nil || len(got) != 0 {
		t.Fatalf("got %v, %v; want none", got, err)
	}
}

// TestMarkProtobufFalse: the marks go above each type listed, indented as
// it is, and unmarking leaves the file as it was.
func TestMarkProtobufFalse(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"apis/shop/v1/types.go": shopTypes})
	omitted, err := ProtobufOmissions(root, "example.com/shop", []string{"apis/shop/v1"})
	if err != nil {
		t.Fatal(err)
	}
	files, err := markProtobufFalse(root, omitted)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, "apis", "shop", "v1", "types.go")
	if want := []string{p}; !reflect.DeepEqual(files, want) {
		t.Fatalf("marked %v, want %v", files, want)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"// OrderSpec has fields named like generated methods.\n" + protobufOmitLine + "\n// +protobuf=false\ntype OrderSpec struct",
		"\t// Grouped is in a group of types.\n\t" + protobufOmitLine + "\n\t// +protobuf=false\n\tGrouped struct",
	} {
		if !strings.Contains(string(data), s) {
			t.Errorf("marked file lacks %q:\n%s", s, data)
		}
	}
	// The marked file is what go-to-protobuf reads: the types are marked.
	if again, err := ProtobufOmissions(root, "example.com/shop", []string{"apis/shop/v1"}); err != nil || len(again) != 0 {
		t.Fatalf("after marking: %v, %v; want every type marked", again, err)
	}
	// What a killed run leaves is removed by the next.
	if err := unmarkLeftovers(root, []string{"apis/shop/v1"}); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(p); err != nil || string(data) != shopTypes {
		t.Fatalf("unmarked file differs (%v):\n%s", err, data)
	}
}

// TestProtobufLeavesOutClashes runs go-to-protobuf, as Generate does, on
// a module whose kind has fields named Size and String: it warns, naming
// the types and the fix, and succeeds; the kind has no protobuf, the
// other kind has, the module builds, and its source carries no mark.
func TestProtobufLeavesOutClashes(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds go-to-protobuf and runs protoc")
	}
	if _, err := exec.LookPath("protoc"); err != nil {
		testenv.Unavailable(t, "protoc not on PATH (hack/lib/protoc.sh installs it): %v", err)
	}
	ctx := t.Context()
	apiloom, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	bin := filepath.Join(work, "bin")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin+string(filepath.Separator),
		"k8s.io/code-generator/cmd/go-to-protobuf", "k8s.io/code-generator/cmd/go-to-protobuf/protoc-gen-gogo",
		"golang.org/x/tools/cmd/goimports")
	build.Dir = apiloom
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the generators: %v\n%s", err, out)
	}

	// The module requires what apiloom does, so the module cache serves it.
	goMod, err := os.ReadFile(filepath.Join(apiloom, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goSum, err := os.ReadFile(filepath.Join(apiloom, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(work, "shop")
	// billing/v1 has only a kind left out: its generated files have no
	// message and still compile.
	billing := shopTypes[:strings.Index(shopTypes, "// Shared is held")]
	billing = strings.ReplaceAll(strings.ReplaceAll(billing, "\tShared Shared "+"`json:\"shared\"`"+"\n", ""), "Order", "Bill")
	writeTree(t, root, map[string]string{
		"go.mod":                   regexp.MustCompile(`(?m)^module .*$`).ReplaceAllString(string(goMod), "module example.com/shop"),
		"go.sum":                   string(goSum),
		"apis/shop/v1/doc.go":      "// +groupName=shop.example.com\npackage v1\n",
		"apis/shop/v1/types.go":    shopTypes,
		"apis/billing/v1/doc.go":   "// +groupName=billing.example.com\npackage v1\n",
		"apis/billing/v1/types.go": billing,
	})
	header := filepath.Join(work, "boilerplate.go.txt")
	writeTree(t, work, map[string]string{"boilerplate.go.txt": ""})

	var log strings.Builder
	cfg := Config{Root: root, APIsDir: "apis", Go: "go", Log: &log}
	r := &runner{m: &module{cfg: cfg, path: "example.com/shop", apiDirs: []string{"apis/billing/v1", "apis/shop/v1"}}, work: work, bin: bin}
	if err := r.protobuf(ctx, []string{"--go-header-file", header}, r.m.pkgs()); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	for _, s := range []string{
		"warning: these types are left out of protobuf",
		"apis/shop/v1/types.go:15: v1.OrderSpec: fields Size, String named like generated.pb.go's methods",
		"apis/shop/v1/types.go:6: v1.Order: holds v1.OrderSpec",
		"apis/billing/v1/types.go:15: v1.BillSpec: fields Size, String named like generated.pb.go's methods",
		"to keep protobuf, rename each Go field",
	} {
		if !strings.Contains(log.String(), s) {
			t.Errorf("the log does not say %q:\n%s", s, log.String())
		}
	}

	dir := filepath.Join(root, "apis", "shop", "v1")
	proto, err := os.ReadFile(filepath.Join(dir, "generated.proto"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"Item", "Shared"} {
		if !strings.Contains(string(proto), "\nmessage "+m+" {") {
			t.Errorf("generated.proto has no message %s:\n%s", m, proto)
		}
	}
	for _, m := range []string{"Order", "OrderSpec", "OrderStatus", "OrderList", "Grouped", "Skipped"} {
		if strings.Contains(string(proto), "\nmessage "+m+" {") {
			t.Errorf("generated.proto has a message %s", m)
		}
	}
	types, err := os.ReadFile(filepath.Join(dir, "types.go"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(types), "apiloom-gen") {
		t.Errorf("types.go keeps a mark:\n%s", types)
	}
	if !strings.Contains(string(types), `protobuf:"bytes,1,opt,name=note"`) {
		t.Errorf("Shared's field has no protobuf tag:\n%s", types)
	}
	if strings.Contains(string(types), `name=size`) {
		t.Errorf("OrderSpec's field has a protobuf tag:\n%s", types)
	}
	vet := exec.CommandContext(ctx, "go", "vet", "./...")
	vet.Dir = root
	if out, err := vet.CombinedOutput(); err != nil {
		t.Fatalf("the module does not build with its generated.pb.go: %v\n%s", err, out)
	}
}
