package generators

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/gengo/v2/types"

	"github.com/apiloom/apiloom/codegen/markers"
	"github.com/apiloom/apiloom/server/resource"
)

// scaleInfo checks +kubebuilder:subresource:scale against the type t, as
// kube-apiserver checks a CRD's subresources.scale and more: the spec path
// must lie under .spec, the status path under .status and the selector
// path under either, as apiextensions requires, and each must name a field
// of t that the server can read and write as the Scale's field. A CRD's
// paths are only checked against its schema when the object is served; a
// type's can be checked now, so a path that names no field, or a field
// of the wrong type, is an error here rather than a 500 at every /scale.
//
// Replicas must be signed integers of 32 or 64 bits (int32, int64, int,
// or pointers to them): the Scale's replicas are an int32, which fits
// them all. The selector must be a string (or a pointer to one), the
// serialized label selector the Scale's status.selector is.
func scaleInfo(t *types.Type, m *markers.Scale) (*resource.ScaleInfo, error) {
	checks := []struct {
		arg, path string
		under     []string
		kinds     []string
		what      string
	}{
		{"specpath", m.SpecPath, []string{".spec."}, []string{"int32", "int64", "int"}, "an int32 or int64"},
		{"statuspath", m.StatusPath, []string{".status."}, []string{"int32", "int64", "int"}, "an int32 or int64"},
		{"selectorpath", m.SelectorPath, []string{".spec.", ".status."}, []string{"string"}, "a string"},
	}
	for _, c := range checks {
		if c.path == "" { // only selectorpath may be empty (markers.parseScale)
			continue
		}
		if !hasAnyPrefix(c.path, c.under) {
			return nil, fmt.Errorf("%s: %s=%s should be a json path under %s", m.Text, c.arg, c.path, strings.Join(trimDots(c.under), " or "))
		}
		g, err := newFieldGetter(t, c.path)
		if err != nil {
			// Its words are about field selectors; only the reason fits.
			why := strings.TrimPrefix(err.Error(), errUnsupportedField.Error()+": ")
			return nil, fmt.Errorf("%s: %s=%s: %s", m.Text, c.arg, c.path, why)
		}
		if g.Named || !contains(c.kinds, g.Builtin) {
			typ := g.Builtin
			if g.Named {
				typ = "a named " + typ + " type"
			}
			return nil, fmt.Errorf("%s: %s=%s names a field of type %s; it must be %s (or a pointer to one)", m.Text, c.arg, c.path, typ, c.what)
		}
	}
	return &resource.ScaleInfo{
		SpecReplicasPath:   m.SpecPath,
		StatusReplicasPath: m.StatusPath,
		LabelSelectorPath:  m.SelectorPath,
	}, nil
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func trimDots(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strings.TrimSuffix(s, ".")
	}
	return out
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// markerPosition is "file:line" of the comment line that holds the marker
// text in the Go files of the package in dir, or "" when none does (the
// marker came from elsewhere). gengo's types carry no positions, and an
// error that points at the line is what lets people fix it.
func markerPosition(dir, text string) string {
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	sort.Strings(files)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || strings.HasPrefix(filepath.Base(f), "zz_generated") {
			continue
		}
		if pos := findCommentLine(f, text); pos != "" {
			return pos
		}
	}
	return ""
}

// findCommentLine is "file:line" of the first "// text" line of file, or "".
func findCommentLine(file, text string) string {
	fh, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for n := 1; sc.Scan(); n++ {
		line, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "//")
		if ok && strings.TrimSpace(line) == text {
			return fmt.Sprintf("%s:%d", file, n)
		}
	}
	return ""
}
