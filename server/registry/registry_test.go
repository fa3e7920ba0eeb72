package registry

import (
	"errors"
	"testing"

	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// TestTypeConverterNeedsSchemas: without OpenAPI definitions for its kinds
// a registry has no type converter, and Build would fail before serving a
// resource whose managed fields it could not keep.
func TestTypeConverterNeedsSchemas(t *testing.T) {
	r := &Registry{}
	Register(r, storagetest.Definition())
	if _, err := r.TypeConverter(); !errors.Is(err, ErrNoSchema) {
		t.Fatalf("TypeConverter without definitions: %v, want ErrNoSchema", err)
	}
	if got := r.Infos(); len(got) != 1 || got[0].Kind != "Widget" {
		t.Fatalf("infos %v", got)
	}
	var _ *resource.Info = r.Entries()[0].Info
}
