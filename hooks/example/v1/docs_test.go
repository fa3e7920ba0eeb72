package v1_test

import (
	"bytes"
	"os"
	"testing"
)

// TestDocsShowRegionWhole: docs/hooks.md shows region.go whole, as its
// complete hook file (imports and all), so that a newcomer learns the
// import paths there; this keeps the copy the file.
func TestDocsShowRegionWhole(t *testing.T) {
	src, err := os.ReadFile("region.go")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../../docs/hooks.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(doc, append(append([]byte("```go\n"), src...), "```\n"...)) {
		t.Error("docs/hooks.md's complete hook file is not hooks/example/v1/region.go: copy the file into it again")
	}
}
