package crdschema

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// generateBad runs Generate on testdata/<name>/v1, whose kind is Thing, and
// returns its error's lines.
func generateBad(t *testing.T, name string) []string {
	t.Helper()
	gvk := schema.GroupVersionKind{Group: name + ".test.apiloom.dev", Version: "v1", Kind: "Thing"}
	out, err := Generate([]string{"./testdata/" + name + "/v1"}, []schema.GroupVersionKind{gvk})
	if err == nil {
		t.Fatalf("%s: no error; schema %s", name, out[gvk])
	}
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("%s: error %v does not wrap ErrInvalid", name, err)
	}
	var lines []string
	for _, l := range strings.Split(err.Error(), "\n")[1:] {
		if strings.HasPrefix(l, "\t") && len(lines) > 0 {
			lines[len(lines)-1] += "\n" + l
			continue
		}
		lines = append(lines, l)
	}
	return lines
}

// expectLines checks that lines are exactly one per want entry, each
// containing every part of it, in any order.
func expectLines(t *testing.T, lines []string, want [][]string) {
	t.Helper()
	used := make([]bool, len(lines))
	for _, parts := range want {
		found := false
		for i, l := range lines {
			ok := !used[i]
			for _, p := range parts {
				ok = ok && strings.Contains(l, p)
			}
			if ok {
				used[i], found = true, true
				break
			}
		}
		if !found {
			t.Errorf("no error with %q; errors:\n%s", parts, strings.Join(lines, "\n"))
		}
	}
	if len(lines) != len(want) {
		t.Errorf("%d errors, want %d:\n%s", len(lines), len(want), strings.Join(lines, "\n"))
	}
}

func pos(t *testing.T, pkg, file string, line int) string {
	abs, err := filepath.Abs(filepath.Join("testdata", pkg, "v1", file))
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s:%d:", abs, line)
}

// TestUnknownAndMisfitMarkers: a marker nobody knows, on the package, a
// kind, a type the kind uses or a field at any depth, fails with its file
// and line; so does a marker whose value does not fit its field
// (controller-tools' own errors, with their positions)  A function's markers are not checked.
func TestUnknownAndMisfitMarkers(t *testing.T) {
	lines := generateBad(t, "bad")
	expectLines(t, lines, [][]string{
		{pos(t, "bad", "doc.go", 4), "unknown marker +kubebuilder:validaton:Optional"},
		{pos(t, "bad", "types.go", 8), "unknown marker +kubebuilder:subresource:statuss"},
		{pos(t, "bad", "types.go", 17), "unknown marker +kubebuilder:validation:MinPropertie=1"},
		{pos(t, "bad", "types.go", 19), "unknown marker +kubebuilder:validation:maxLength=3"},
		{pos(t, "bad", "types.go", 32), "unknown marker +kubebuilder:validation:Maxlength=3"},
		{pos(t, "bad", "types.go", 22), "must apply minimum to a numeric value, found string"},
		{pos(t, "bad", "types.go", 24), `must apply minlength to a textual value, found type "integer"`},
		{pos(t, "bad", "types.go", 26), "must apply minitems to an array"},
	})
}

// TestMarkerValueDoesNotParse: a malformed value is controller-tools'
// error, with its position.
func TestMarkerValueDoesNotParse(t *testing.T) {
	expectLines(t, generateBad(t, "badparse"), [][]string{
		{pos(t, "badparse", "types.go", 16), `expected integer, got "abc"`},
	})
}

// TestRefusedByAPIServer: what controller-gen writes but kube-apiserver
// would not accept as a CRD fails generation too.
func TestRefusedByAPIServer(t *testing.T) {
	expectLines(t, generateBad(t, "baddefault"), [][]string{
		{"properties[defaultNotInEnum].default", `Unsupported value: "c"`},
		{"properties[defaultNotBool].default", "must be of type boolean"},
	})
	expectLines(t, generateBad(t, "badpattern"), [][]string{
		{"kind Thing: kube-apiserver would refuse its CRD", "properties[badPattern].pattern", "must be a valid regular expression"},
	})
	expectLines(t, generateBad(t, "badcel"), [][]string{
		{"properties[badRule].x-kubernetes-validations[0].rule", "compilation failed", "does not support field selection"},
	})
	expectLines(t, generateBad(t, "badfloat"), [][]string{
		{pos(t, "badfloat", "types.go", 16), "found float", "crd:allowDangerousTypes=true"},
	})
}

// TestGeneratorTags: the other generators' tags are known, typos of them
// are not.
func TestGeneratorTags(t *testing.T) {
	for text, want := range map[string]bool{
		"+genclient":                       true,
		"+genclient:nonNamespaced":         true,
		"+genclient:noStatus":              true,
		"+k8s:deepcopy-gen=package":        true,
		"+k8s:deepcopy-gen:interfaces=x.Y": true,
		"+kubebuilder:object:root=true":    true,
		"+groupName=a.b":                   true,
		"+patchStrategy=merge":             true,
		"+genclients":                      false,
		"+k8s:deepcopy-gen-x":              false,
		"+kubebuilder:objects:root=true":   false,
	} {
		if got := generatorTag(text); got != want {
			t.Errorf("generatorTag(%q) = %v, want %v", text, got, want)
		}
	}
}
