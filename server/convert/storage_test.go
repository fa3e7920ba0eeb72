package convert

import (
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiloom/apiloom/server/cache"
	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

type widget = storagetest.Widget

// sizeFactor is how the test conversion changes a Widget: its storage
// version keeps spec.size ten times over, so a value that skipped a
// conversion, either way, shows.
const sizeFactor = 10

// versions returns the storagetest Widget's definition as the storage
// version and a second view of it with the conversion between them, as
// generated code states them. The view keeps the name v1, which the
// conformance suite checks every object's apiVersion against; its
// objects differ from the stored ones by spec.size.
func versions() (*resource.Definition[*widget], *resource.Definition[*widget], resource.Conversion[*widget, *widget]) {
	stored := storagetest.Definition()
	v2 := storagetest.Definition()
	v2.StorageVersion = "v1"
	return stored, v2, resource.Conversion[*widget, *widget]{
		Storage: stored,
		ToStorage: func(in, out *widget) error {
			*out = *in
			out.Spec.Size = in.Spec.Size * sizeFactor
			return nil
		},
		FromStorage: func(in, out *widget) error {
			*out = *in
			out.Spec.Size = in.Spec.Size / sizeFactor
			return nil
		},
	}
}

// TestConformanceOverStore runs the storage conformance suite against a
// second version served over the etcd store of the first: a view of
// another version keeps every promise the store does.
func TestConformanceOverStore(t *testing.T) {
	storagetest.Run(t, storagetest.Config{
		NewStore: func(t *testing.T, client *clientv3.Client) storage.Interface[*widget] {
			stored, v2, conv := versions()
			return New(storage.New(client, storagetest.Prefix, stored), v2, conv)
		},
	})
}

func newReadyCache(t *testing.T, def *resource.Definition[*widget], client *clientv3.Client) *cache.Cache[*widget] {
	t.Helper()
	c, err := cache.New(def, storage.New(client, storagetest.Prefix, def), cache.WithWaitTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	if err := c.WaitReady(t.Context()); err != nil {
		t.Fatal(err)
	}
	return c
}
