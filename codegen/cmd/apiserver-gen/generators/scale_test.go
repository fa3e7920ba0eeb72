package generators

import (
	"regexp"
	"strings"
	"testing"

	"k8s.io/gengo/v2/parser"

	"github.com/apiloom/apiloom/server/resource"
)

const invalidScalePkg = "github.com/apiloom/apiloom/codegen/cmd/apiserver-gen/testdata/invalid/scale/v1"

// TestAnalyzeScale checks that every wrong +kubebuilder:subresource:scale
// in testdata/invalid/scale/v1 is an error that names the type, the file
// and line of the marker and what is wrong, and that the right one
// becomes the resource's Info.Scale.
func TestAnalyzeScale(t *testing.T) {
	p := parser.New()
	if err := p.LoadPackages("../testdata/invalid/scale/v1"); err != nil {
		t.Fatal(err)
	}
	u, err := p.NewUniverse()
	if err != nil {
		t.Fatal(err)
	}
	gv, err := newAnalyzer(nil).groupVersion(u.Package(invalidScalePkg))
	if err == nil {
		t.Fatal("no error for testdata/invalid/scale/v1")
	}
	lines := strings.Split(err.Error(), "\n")
	t.Logf("errors:\n%v", err)
	at := `: [^ ]*testdata/invalid/scale/v1/types\.go:[0-9]+: \+kubebuilder:subresource:scale:`
	want := map[string]string{
		"NotUnderSpec":      at + `.*specpath=\.status\.replicas should be a json path under \.spec$`,
		"NotUnderStatus":    at + `.*statuspath=\.spec\.replicas should be a json path under \.status$`,
		"SelectorOutside":   at + `.*selectorpath=\.metadata\.name should be a json path under \.spec or \.status$`,
		"NoSuchField":       at + `.*specpath=\.spec\.size: .*Spec has no field with JSON name "size"$`,
		"NotInteger":        at + `.*specpath=\.spec\.name names a field of type string; it must be an int32 or int64`,
		"SmallInteger":      at + `.*specpath=\.spec\.small names a field of type int16; it must be an int32 or int64`,
		"StatusNotInteger":  at + `.*statuspath=\.status\.selector names a field of type string; it must be an int32 or int64`,
		"SelectorNotString": at + `.*selectorpath=\.status\.replicas names a field of type int64; it must be a string`,
		"NotSimple":         at + `.*specpath=\.spec\.items\[0\]: .*must be a plain \.a\.b\.c path`,
		"NoStatusPath":      `: markers: malformed marker \+kubebuilder:subresource:scale:specpath=\.spec\.replicas: statuspath is required$`,
	}
	for typ, pattern := range want {
		line := lineFor(lines, invalidScalePkg+"."+typ+":")
		if !regexp.MustCompile(pattern).MatchString(line) {
			t.Errorf("%s: error %q does not match %q", typ, line, pattern)
		}
	}
	if len(lines) != len(want) {
		t.Errorf("got %d errors, want %d:\n%v", len(lines), len(want), err)
	}
	if gv == nil || len(gv.Resources) != 1 || gv.Resources[0].Kind != "Good" {
		t.Fatalf("resources = %+v, want only Good", gv)
	}
	wantInfo := resource.ScaleInfo{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas", LabelSelectorPath: ".status.selector"}
	if got := gv.Resources[0].Scale; got == nil || *got != wantInfo {
		t.Fatalf("Good's Scale = %+v, want %+v", got, wantInfo)
	}
}
