package generators

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/gengo/v2/parser"

	"github.com/apiloom/apiloom/server/resource"
)

const (
	customAPIPkg   = "github.com/apiloom/apiloom/codegen/cmd/apiserver-gen/testdata/invalid/custom/v1"
	customHooksPkg = "github.com/apiloom/apiloom/codegen/cmd/apiserver-gen/generators/testdata/hooks"
)

// TestCustomSubresources checks that the custom subresources of
// testdata/invalid/custom/v1 are read from their markers and matched with
// the hooks methods of testdata/hooks/custom/v1, that every wrong one is
// an error naming the file and line of its marker or method, and that the
// right ones get their discovery kind and their action input's schema.
func TestCustomSubresources(t *testing.T) {
	p := parser.New()
	if err := p.LoadPackages("../testdata/invalid/custom/v1"); err != nil {
		t.Fatal(err)
	}
	u, err := p.NewUniverse()
	if err != nil {
		t.Fatal(err)
	}
	a := newAnalyzer(nil)
	a.universe = u
	gv, err := a.groupVersion(u.Package(customAPIPkg))
	if err == nil {
		t.Fatal("no error for testdata/invalid/custom/v1")
	}
	t.Logf("model errors:\n%v", err)
	types := `[^ ]*testdata/invalid/custom/v1/types\.go:`
	checkErrors(t, err, map[string]string{
		"BadVerb":                customAPIPkg + `\.BadVerb: ` + types + `32: \+genclient:method=PatchThing,verb=patch,subresource=thing: verb patch is not supported on the custom subresource thing: an action is verb=create .*, a view verb=get .*, a stream \+apiloom:stream$`,
		"NotObject":              customAPIPkg + `\.NotObject: ` + types + `51: \+genclient:method=Poke.*: input=Plain: ` + customAPIPkg + `\.Plain is not a runtime\.Object: it must be a struct embedding metav1\.TypeMeta$`,
		customAPIPkg + ".Plain:": customAPIPkg + `\.Plain: ` + types + `194: \+apiloom:stream:method=Logs,subresource=logs,input=LogOptions: \+apiloom:stream is for a \+genclient kind$`,
		"StructOpts":             customAPIPkg + `\.StructOpts: ` + types + `70: \+apiloom:stream:method=Logs.*: input=StructOptions: field Since of type k8s.io/apimachinery/pkg/apis/meta/v1\.Time cannot be a query parameter: only strings, bools, integers, pointers to them and \[\]string can$`,
	})

	var kinds []string
	for _, r := range gv.Resources {
		kinds = append(kinds, r.Kind)
	}
	if got := strings.Join(kinds, " "); got != "Good Misnamed Missing Mistyped" {
		t.Fatalf("kinds = %s", got)
	}

	// As findHooks, whose base/... pattern would skip testdata.
	pkgs, err := loadHooks(customHooksPkg + "/custom/v1")
	if err != nil {
		t.Fatal(err)
	}
	err = errors.Join(checkHooks(pkgs, customHooksPkg, []*groupVersion{gv}), unimplementedCustom(customHooksPkg, []*groupVersion{gv}))
	if err == nil {
		t.Fatal("no error for testdata/hooks/custom/v1")
	}
	t.Logf("hooks errors:\n%v", err)
	hooks := `[^ ]*testdata/hooks/custom/v1/hooks\.go:`
	checkErrors(t, err, map[string]string{
		"Mistyped.GetConnection has":         `^` + hooks + `24: subresource method Mistyped\.GetConnection has signature func\(\*github.com/apiloom/apiloom/server/hook\.Request, \*` + customAPIPkg + `\.Mistyped\) \(\*` + customAPIPkg + `\.BackupResult, error\), want func\(\*github.com/apiloom/apiloom/server/hook\.Request, \*` + customAPIPkg + `\.Mistyped\) \(\*` + customAPIPkg + `\.Connection, error\)$`,
		"Misnamed.GetConection":              `^` + hooks + `31: Misnamed\.GetConection is not a hook: the hooks of Misnamed are Default, .*, ValidateDelete, and its subresource methods GetConnection$`,
		"subresource connection of Missing":  `^` + types + `89: \+genclient:method=GetConnection,.*: subresource connection of Missing has no method Missing\.GetConnection in the hooks package ` + customHooksPkg + `/custom/v1: add func \(Missing\) GetConnection\(req \*hook\.Request, obj \*v1\.Missing\) \(\*v1\.Connection, error\)$`,
		"subresource connection of Mistyped": `^` + types + `108: `,
		"subresource connection of Misnamed": `^` + types + `127: `,
	})

	if err := addSchemas([]string{"../testdata/invalid/custom/v1"}, []*groupVersion{gv}); err != nil {
		t.Fatal(err)
	}
	good := gv.Resources[0]
	want := []struct {
		name, method, kind string
		typ                resource.SubresourceType
		input, result      string
	}{
		{"backup", "Backup", "BackupRequest", resource.Action, "BackupRequest", "BackupResult"},
		{"connection", "GetConnection", "Connection", resource.View, "", "Connection"},
		{"logs", "Logs", "Good", resource.Stream, "LogOptions", ""},
	}
	if len(good.Custom) != len(want) {
		t.Fatalf("Good has %d custom subresources, want %d (scale is not one)", len(good.Custom), len(want))
	}
	for i, w := range want {
		c := good.Custom[i]
		gvk := metav1.GroupVersionKind{Group: "custom.invalid.test.apiloom.dev", Version: "v1", Kind: w.kind}
		if c.Name != w.name || c.Method != w.method || c.Type != w.typ || c.Kind != gvk || !c.Implemented ||
			openAPIName(c.Input) != qualified(w.input) || openAPIName(c.Result) != qualified(w.result) {
			t.Errorf("Good's subresource %d = %+v, want %+v", i, c, w)
		}
	}
	if s := good.Custom[0].InputSchema; !strings.Contains(s, `"required":["destination"]`) || !strings.Contains(s, `"maxLength":512`) {
		t.Errorf("backup's input schema lacks its markers: %s", s)
	}
	if good.Custom[1].InputSchema != "" || good.Custom[2].InputSchema != "" {
		t.Errorf("only an action has an input schema")
	}
	if good.Hooks == nil || !good.Hooks.Custom || len(good.Hooks.Methods) != 0 {
		t.Errorf("Good's hooks = %+v", good.Hooks)
	}
}

func qualified(name string) string {
	if name == "" {
		return ""
	}
	return customAPIPkg + "." + name
}

// checkErrors checks that err has one line per entry of want, the line
// containing the key matching its pattern.
func checkErrors(t *testing.T, err error, want map[string]string) {
	t.Helper()
	lines := strings.Split(err.Error(), "\n")
	for key, pattern := range want {
		found := false
		for _, l := range lines {
			if strings.Contains(l, key) {
				found = true
				if !regexp.MustCompile(pattern).MatchString(l) {
					t.Errorf("error %q does not match %q", l, pattern)
				}
			}
		}
		if !found {
			t.Errorf("no error about %s", key)
		}
	}
	if len(lines) != len(want) {
		t.Errorf("got %d errors, want %d:\n%v", len(lines), len(want), err)
	}
}
