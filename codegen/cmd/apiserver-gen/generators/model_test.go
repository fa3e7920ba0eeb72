package generators

import (
	"strings"
	"sync"
	"testing"

	"k8s.io/gengo/v2/parser"
	"k8s.io/gengo/v2/types"
)

const (
	invalidPkg = "github.com/apiloom/apiloom/codegen/cmd/apiserver-gen/testdata/invalid/v1"
	noGroupPkg = "github.com/apiloom/apiloom/codegen/cmd/apiserver-gen/testdata/invalid/nogroup/v1"
)

// invalidUniverse loads the broken test packages once for every test here:
// loading type-checks all dependencies from source, which takes seconds.
var invalidUniverse = sync.OnceValues(func() (types.Universe, error) {
	p := parser.New()
	if err := p.LoadPackages("../testdata/invalid/v1", "../testdata/invalid/nogroup/v1"); err != nil {
		return nil, err
	}
	return p.NewUniverse()
})

func loadInvalid(t *testing.T) types.Universe {
	t.Helper()
	u, err := invalidUniverse()
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestAnalyzeErrors checks that every broken type in testdata/invalid/v1 is
// reported, each error naming the type and saying what is wrong.
func TestAnalyzeErrors(t *testing.T) {
	u := loadInvalid(t)
	an := newAnalyzer(nil)
	gv, err := an.groupVersion(u.Package(invalidPkg))
	if err == nil {
		t.Fatal("no error for testdata/invalid/v1")
	}
	lines := strings.Split(err.Error(), "\n")

	want := map[string][]string{
		"NoList":                {"no NoListList type"},
		"NoDeepCopy":            {"no DeepCopyObject method", "+k8s:deepcopy-gen:interfaces"},
		"NoMeta":                {"must embed metav1.ObjectMeta"},
		"BadMarker":             {"malformed marker", `+kubebuilder:resource:shortName="unterminated`},
		"BadScope":              {"scope=Cluster needs +genclient:nonNamespaced"},
		"BadStatus":             {"+kubebuilder:subresource:status", "+genclient:noStatus"},
		"BadPath":               {"path=things", `requests "badpaths"`, "+resourceName=things"},
		"BadFieldFloat":         {"JSONPath=.spec.ratio", "float64"},
		"BadFieldSlice":         {"JSONPath=.spec.tags", "slice"},
		"BadFieldMissing":       {"JSONPath=.spec.nope", `no field with JSON name "nope"`},
		"BadFieldMetadata":      {"JSONPath=.metadata.name", "metadata fields are not selectable"},
		"BadFieldSyntax":        {"JSONPath=.spec.tags[0]", "plain .a.b.c path"},
		"BadFieldThroughScalar": {"JSONPath=.spec.name.first", ".spec.name is a string, not a struct"},
		"BadColumnType":         {"+kubebuilder:printcolumn:name=Name,type=text", `type "text" must be one of boolean, date, integer, number, string`},
		"BadColumnPath":         {"+kubebuilder:printcolumn:name=Tag,type=string,JSONPath=.spec.tags[", `JSONPath ".spec.tags[" does not parse`},
		"BadColumnMissing":      {"+kubebuilder:printcolumn:name=Name,JSONPath=.spec.name", "type is required"},
	}
	for typ, parts := range want {
		line := lineFor(lines, invalidPkg+"."+typ+":")
		if line == "" {
			t.Errorf("%s: not reported; errors:\n%v", typ, err)
			continue
		}
		for _, p := range parts {
			if !strings.Contains(line, p) {
				t.Errorf("%s: error %q does not mention %q", typ, line, p)
			}
		}
	}
	if len(lines) != len(want) {
		t.Errorf("got %d errors, want %d:\n%v", len(lines), len(want), err)
	}

	if gv == nil || len(gv.Resources) != 1 || gv.Resources[0].Kind != "Warned" {
		t.Fatalf("resources = %+v, want only Warned", gv)
	}
	warns := strings.Join(an.warns, "\n")
	for _, w := range []string{
		"storageVersion",
		"+kubebuilder:selectableField:JSONPath=.spec.name: ignored",
		`name=Nope,type=string,JSONPath=.spec.nope: .spec has no field "nope"; the column will always be empty`,
		"name=Count,type=integer,JSONPath=.spec.name: type integer cannot show a string value",
		"name=First,type=string,JSONPath=.spec.tags.first: .spec.tags is a slice, not an object",
		"name=born,type=boolean,JSONPath=.metadata.labels.born: kubectl will show two BORN columns",
		`colour=red: ignoring unknown argument "colour"`,
	} {
		if !strings.Contains(warns, w) {
			t.Errorf("warnings %q do not mention %q", warns, w)
		}
	}
	for _, w := range an.warns {
		if strings.Contains(w, "name=Born,") || strings.Contains(w, "name=Ratio,") && !strings.Contains(w, "colour") {
			t.Errorf("warning %q about a column that can show values", w)
		}
	}
}

func TestAnalyzeNoGroupName(t *testing.T) {
	u := loadInvalid(t)
	_, err := newAnalyzer(nil).groupVersion(u.Package(noGroupPkg))
	if err == nil || !strings.Contains(err.Error(), "no +groupName") {
		t.Fatalf("err = %v, want a missing +groupName error", err)
	}
}

func lineFor(lines []string, prefix string) string {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}
