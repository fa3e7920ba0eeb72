package registry

import (
	"testing"

	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// TestStorageByType: after Build, a served kind's storage is found by its
// Go type; the first storage recorded for a type (the storage version's)
// wins, and a type nobody serves is not found.
func TestStorageByType(t *testing.T) {
	out := &Served{}
	if _, ok := Storage[*storagetest.Widget](out); ok {
		t.Fatal("found a storage in an empty Served")
	}
	type marker struct {
		storage.Interface[*storagetest.Widget]
	}
	var first, second storage.Interface[*storagetest.Widget] = marker{}, &marker{}
	addStorage(out, first)
	addStorage(out, second)
	got, ok := Storage[*storagetest.Widget](out)
	if !ok || got != first {
		t.Fatalf("Storage = %v, %v; want the first one recorded", got, ok)
	}
}
