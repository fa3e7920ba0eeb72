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

// TestConvertedNeedsStorageVersion: a version registered converted to a
// storage version that was not built is an error, not a panic.
func TestConvertedNeedsStorageVersion(t *testing.T) {
	stored := storagetest.Definition()
	v2 := storagetest.Definition()
	v2.Version, v2.StorageVersion = "v2", "v1"
	r := &Registry{}
	RegisterConverted(r, v2, resource.Conversion[*storagetest.Widget, *storagetest.Widget]{
		Storage:     stored,
		ToStorage:   func(in, out *storagetest.Widget) error { *out = *in; return nil },
		FromStorage: func(in, out *storagetest.Widget) error { *out = *in; return nil },
	})
	e := r.Entries()[0]
	if e.storedAs != &stored.Info || e.Info.Stored() {
		t.Fatalf("entry %+v", e)
	}
	if err := e.build(t.Context(), Backend{}, shared{}, &Served{}); !errors.Is(err, ErrNoStorageVersion) {
		t.Fatalf("build without the storage version: %v, want ErrNoStorageVersion", err)
	}
}

// TestVersionsByKind: Build gives each resource the versions of its kind,
// the field manager's conversions between them (endpoints.WithVersions);
// a kind with converted versions but no storage version is
// ErrNoStorageVersion before anything is built.
func TestVersionsByKind(t *testing.T) {
	stored := storagetest.Definition()
	v2 := storagetest.Definition()
	v2.Version, v2.StorageVersion = "v2", "v1"
	conv := resource.Conversion[*storagetest.Widget, *storagetest.Widget]{
		Storage:     stored,
		ToStorage:   func(in, out *storagetest.Widget) error { *out = *in; return nil },
		FromStorage: func(in, out *storagetest.Widget) error { *out = *in; return nil },
	}
	r := &Registry{}
	Register(r, stored)
	RegisterConverted(r, v2, conv)
	got, err := r.versions()
	if err != nil {
		t.Fatal(err)
	}
	if v := got[stored.GroupVersionKind().GroupKind()]; len(got) != 1 || v == nil || len(v.Infos()) != 2 ||
		v.Infos()[0] != &stored.Info || v.Infos()[1] != &v2.Info {
		t.Fatalf("versions %v", got)
	}

	r = &Registry{}
	RegisterConverted(r, v2, conv)
	if _, err := r.versions(); !errors.Is(err, ErrNoStorageVersion) {
		t.Fatalf("without the storage version: %v, want ErrNoStorageVersion", err)
	}
}
