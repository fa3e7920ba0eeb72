package generators

import (
	"regexp"
	"strings"
	"testing"

	"k8s.io/gengo/v2/parser"
)

const versionsPkg = "github.com/apiloom/apiloom/codegen/cmd/apiserver-gen/testdata/invalid/versions/"

// TestLinkVersionsErrors: a kind with several versions and no storage
// version, or two, a version whose package does not name the storage
// version's for conversion-gen, or lacks its conversions, are each an error
// with the file and line to fix.
func TestLinkVersionsErrors(t *testing.T) {
	p := parser.New()
	if err := p.LoadPackages("../testdata/invalid/versions/v1", "../testdata/invalid/versions/v2", "../testdata/invalid/versions/v3"); err != nil {
		t.Fatal(err)
	}
	u, err := p.NewUniverse()
	if err != nil {
		t.Fatal(err)
	}
	var gvs []*groupVersion
	for _, v := range []string{"v1", "v2", "v3"} {
		gv, err := newAnalyzer(nil).groupVersion(u.Package(versionsPkg + v))
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		gvs = append(gvs, gv)
	}
	err = linkVersions(gvs)
	if err == nil {
		t.Fatal("no error")
	}
	t.Logf("errors:\n%v", err)
	lines := strings.Split(err.Error(), "\n")
	want := []string{
		`versions/v1/types\.go:\d+: Gizmo\.versions\.test\.apiloom\.dev is served in versions v1, v2 and none has \+kubebuilder:storageversion`,
		`versions/v2/types\.go:\d+: Gizmo\.versions\.test\.apiloom\.dev is served in versions v1, v2 and none has \+kubebuilder:storageversion`,
		`versions/v2/doc\.go:\d+: versions\.test\.apiloom\.dev/v2 Thing is stored as v1 but the package has no Convert_v2_Thing_To_v1_Thing`,
		`versions/v2/doc\.go:\d+: versions\.test\.apiloom\.dev/v2 Thing is stored as v1 but the package has no Convert_v1_Thing_To_v2_Thing`,
		`versions/v3/doc\.go:\d+: versions\.test\.apiloom\.dev/v3 Thing is stored as v1: the package needs \+k8s:conversion-gen=` + regexp.QuoteMeta(versionsPkg+"v1"),
		`versions/v1/types\.go:\d+: Widget\.versions\.test\.apiloom\.dev has \+kubebuilder:storageversion in 2 versions`,
		`versions/v2/types\.go:\d+: Widget\.versions\.test\.apiloom\.dev has \+kubebuilder:storageversion in 2 versions`,
	}
	for _, w := range want {
		re := regexp.MustCompile(w)
		found := false
		for _, l := range lines {
			found = found || re.MatchString(l)
		}
		if !found {
			t.Errorf("no error matching %s", w)
		}
	}
	if len(lines) != len(want) {
		t.Errorf("%d errors, want %d", len(lines), len(want))
	}
}
