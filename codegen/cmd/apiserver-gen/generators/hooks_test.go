package generators

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/gengo/v2/types"
)

// TestHooks checks that the methods of a kind's hooks type are wired by
// name and signature, and that every near miss is an error naming its
// file and line.
func TestHooks(t *testing.T) {
	const base = "github.com/apiloom/apiloom/codegen/cmd/apiserver-gen/generators/testdata/hooks"
	pkgs, err := loadHooks(base + "/example/v1")
	if err != nil {
		t.Fatal(err)
	}
	db, region := &resourceModel{Kind: "Database"}, &resourceModel{Kind: "Region"}
	gv := &groupVersion{Group: "example.apiloom.dev", GroupDir: "example", Version: "v1",
		Pkg: &types.Package{Path: "github.com/apiloom/apiloom/apis/example/v1"}, Resources: []*resourceModel{db, region}}
	err = checkHooks(pkgs, base, []*groupVersion{gv})
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{
		"testdata/hooks/example/v1/hooks.go:19: Database.ValidateUpdat is not a hook",
		"testdata/hooks/example/v1/hooks.go:23: hook Database.PrepareForCreate has signature func(*github.com/apiloom/apiloom/apis/example/v1.Database), want func(*github.com/apiloom/apiloom/server/hook.Request, *github.com/apiloom/apiloom/apis/example/v1.Database)",
		"testdata/hooks/example/v1/hooks.go:29: hook Region.ValidateDelete has signature",
		"testdata/hooks/example/v1/hooks.go:33: type Regon has hook method ValidateDelete but example.apiloom.dev/v1 has no kind Regon",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("errors lack %q:\n%s", want, msg)
		}
	}
	if strings.Count(msg, "\n") != 3 {
		t.Errorf("want 4 errors, got:\n%s", msg)
	}
	// The right ones are wired, in Definition.Hooks' order, pointer
	// receivers included.
	if db.Hooks == nil || !slices.Equal(db.Hooks.Methods, []string{"Default", "ValidateUpdate"}) || db.Hooks.Type != "Database" {
		t.Errorf("Database hooks: %+v", db.Hooks)
	}

	// A hooks package of no group-version.
	err = checkHooks(pkgs, base+"/example", []*groupVersion{gv})
	if err == nil || !strings.Contains(err.Error(), "is of no API group-version") {
		t.Errorf("stray package: %v", err)
	}
}

// TestBuiltinHooks: a built-in kind takes hooks in the hooks package of
// its group-version, typed with its k8s.io/api type.
func TestBuiltinHooks(t *testing.T) {
	const base = "github.com/apiloom/apiloom/codegen/cmd/apiserver-gen/generators/testdata/hooks"
	pkgs, err := loadHooks(base + "/core/v1")
	if err != nil {
		t.Fatal(err)
	}
	cm := &resourceModel{Kind: "ConfigMap"}
	gv := &groupVersion{Group: "", GroupDir: "core", Version: "v1",
		Pkg: &types.Package{Path: "k8s.io/api/core/v1"}, Resources: []*resourceModel{cm}}
	if err := checkHooks(pkgs, base, []*groupVersion{gv}); err != nil {
		t.Fatal(err)
	}
	if cm.Hooks == nil || !slices.Equal(cm.Hooks.Methods, []string{"PrepareForUpdate", "ValidateCreate"}) {
		t.Fatalf("ConfigMap hooks: %+v", cm.Hooks)
	}
}
