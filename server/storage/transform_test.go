package storage_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apiserver/pkg/server/options/encryptionconfig"
	"k8s.io/apiserver/pkg/storage/value"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// Two AES keys (32 bytes, base64) for the tests' configurations.
const (
	testKey1 = "spg0LiEpShZ7g4v2R5w/6Gi0at9szy5t4guVd1mE79o="
	testKey2 = "yJN6iTo0LAhO+tpEgqkGm24hNqsz5hXbRaTQGhcZ8ww="
)

// widgetTransformer loads an EncryptionConfiguration for widgets whose
// providers are the given YAML list, the way the server does.
func widgetTransformer(t testing.TB, providers string) value.Transformer {
	t.Helper()
	cfg := "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n" +
		"- resources: [widgets.storagetest.apiloom.dev]\n  providers:\n" + providers
	path := filepath.Join(t.TempDir(), "encryption.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	loaded, err := encryptionconfig.LoadEncryptionConfig(t.Context(), path, false, "test")
	if err != nil {
		t.Fatalf("load %s: %v", cfg, err)
	}
	return encryptionconfig.StaticTransformers(loaded.Transformers).TransformerForResource(storagetest.Definition().GroupResource())
}

// aesgcmProviders is an aesgcm provider with the keys named in
// name, secret pairs, the first one encrypting.
func aesgcmProviders(nameSecret ...string) string {
	s := "  - aesgcm:\n      keys:\n"
	for i := 0; i+1 < len(nameSecret); i += 2 {
		s += "      - name: " + nameSecret[i] + "\n        secret: " + nameSecret[i+1] + "\n"
	}
	return s
}

// TestConformanceEncrypted runs the storage suite with values encrypted:
// every reader (get, list, watch, the previous values of watch events)
// sees plain objects. identity follows, as the suite plants plaintext
// values with etcd's client.
func TestConformanceEncrypted(t *testing.T) {
	storagetest.Run(t, storagetest.Config{
		NewStore: func(t *testing.T, c *clientv3.Client) storage.Interface[*storagetest.Widget] {
			return newWidgetStore(t, c, storage.WithSyncPageSize(1), storage.WithTransformer(widgetTransformer(t, aesgcmProviders("key1", testKey1)+"  - identity: {}\n")))
		},
	})
}

func TestEncryption(t *testing.T) {
	root := etcdtest.Start(t)
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, *clientv3.Client)
	}{
		{"StoredEncrypted", testStoredEncrypted},
		{"MovedValueIsCorrupt", testMovedValueIsCorrupt},
		{"StaleRewrittenByNoOpUpdate", testStaleRewrittenByNoOpUpdate},
		{"PlaintextMigrates", testPlaintextMigrates},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, storagetest.NewClient(t, root, "/"+t.Name()))
		})
	}
}

func stored(t *testing.T, c *clientv3.Client, key string) ([]byte, int64) {
	t.Helper()
	resp, err := c.Get(t.Context(), storagetest.Prefix+key)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 1 {
		t.Fatalf("%s: %d values", key, len(resp.Kvs))
	}
	return resp.Kvs[0].Value, resp.Kvs[0].ModRevision
}

// testStoredEncrypted: values are stored under the provider's prefix with
// no plaintext, and read back as the object written.
func testStoredEncrypted(t *testing.T, c *clientv3.Client) {
	s := newWidgetStore(t, c, storage.WithTransformer(widgetTransformer(t, aesgcmProviders("key1", testKey1))))
	ctx := t.Context()
	if _, err := s.Create(ctx, "ns/a", storagetest.NewWidget("ns", "a", "ultramarine")); err != nil {
		t.Fatal(err)
	}
	data, _ := stored(t, c, "ns/a")
	if !bytes.HasPrefix(data, []byte("k8s:enc:aesgcm:v1:key1:")) || bytes.Contains(data, []byte("ultramarine")) {
		t.Fatalf("stored %q, want aesgcm key1 ciphertext", data)
	}
	got, err := s.Get(ctx, "ns/a", storage.GetOptions{})
	if err != nil || got.Spec.Color != "ultramarine" {
		t.Fatalf("get: %+v, %v", got, err)
	}
	// A real change is written, encrypted again.
	upd, err := s.GuaranteedUpdate(ctx, "ns/a", nil, func(w *storagetest.Widget) (*storagetest.Widget, error) {
		w.Spec.Color = "vermilion"
		return w, nil
	})
	if err != nil || upd.Spec.Color != "vermilion" {
		t.Fatalf("update: %+v, %v", upd, err)
	}
	if data, _ := stored(t, c, "ns/a"); !bytes.HasPrefix(data, []byte("k8s:enc:aesgcm:v1:key1:")) || bytes.Contains(data, []byte("vermilion")) {
		t.Fatalf("stored after update %q", data)
	}
}

// testMovedValueIsCorrupt: the key is authenticated data, so a value
// copied to another key does not decrypt; it is a corrupt value (left out
// of lists, deletable only by the unsafe delete), as kube-apiserver treats
// it.
func testMovedValueIsCorrupt(t *testing.T, c *clientv3.Client) {
	s := newWidgetStore(t, c, storage.WithTransformer(widgetTransformer(t, aesgcmProviders("key1", testKey1))))
	ctx := t.Context()
	if _, err := s.Create(ctx, "ns/a", storagetest.NewWidget("ns", "a", "red")); err != nil {
		t.Fatal(err)
	}
	data, _ := stored(t, c, "ns/a")
	if _, err := c.Put(ctx, storagetest.Prefix+"ns/b", string(data)); err != nil {
		t.Fatal(err)
	}
	_, err := s.Get(ctx, "ns/b", storage.GetOptions{})
	se, ok := storage.AsError(err)
	if !ok || !errors.Is(err, storage.ErrCorrupt) || !se.Untransformable || se.Key != "ns/b" {
		t.Fatalf("get of a moved value: %v, want ErrCorrupt untransformable for ns/b", err)
	}
	if _, err := s.GuaranteedUpdate(ctx, "ns/b", nil, func(w *storagetest.Widget) (*storagetest.Widget, error) { return w, nil }); !errors.Is(err, storage.ErrCorrupt) {
		t.Fatalf("update of a moved value: %v, want ErrCorrupt", err)
	}
	l, err := s.GetList(ctx, storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 1 || len(l.Corrupt) != 1 || l.Corrupt[0].Key != "ns/b" {
		t.Fatalf("list: %d items, corrupt %v", len(l.Items), l.Corrupt)
	}
	if err := s.DeleteCorrupt(ctx, "ns/b", false); err != nil {
		t.Fatalf("unsafe delete: %v", err)
	}
	// With another secret under the same name it cannot be read either.
	other := newWidgetStore(t, c, storage.WithTransformer(widgetTransformer(t, aesgcmProviders("key1", testKey2))))
	if _, err := other.Get(ctx, "ns/a", storage.GetOptions{}); !errors.Is(err, storage.ErrCorrupt) {
		t.Fatalf("get with another key: %v, want ErrCorrupt", err)
	}
}

// testStaleRewrittenByNoOpUpdate: after a new write key is put first, an
// update that changes nothing still writes a value read with the old key
// (stale), moving it to the new key; an unchanged value under the current
// key is not written.
func testStaleRewrittenByNoOpUpdate(t *testing.T, c *clientv3.Client) {
	ctx := t.Context()
	old := newWidgetStore(t, c, storage.WithTransformer(widgetTransformer(t, aesgcmProviders("key1", testKey1))))
	if _, err := old.Create(ctx, "ns/a", storagetest.NewWidget("ns", "a", "red")); err != nil {
		t.Fatal(err)
	}
	_, rev1 := stored(t, c, "ns/a")
	// key2 first: writes use it, key1 still reads.
	s := newWidgetStore(t, c, storage.WithTransformer(widgetTransformer(t, aesgcmProviders("key2", testKey2, "key1", testKey1))))
	noop := func(w *storagetest.Widget) (*storagetest.Widget, error) { return w, nil }
	got, err := s.GuaranteedUpdate(ctx, "ns/a", nil, noop)
	if err != nil {
		t.Fatal(err)
	}
	data, rev2 := stored(t, c, "ns/a")
	if rev2 == rev1 || got.ResourceVersion != storage.FormatResourceVersion(rev2) {
		t.Fatalf("no-op update of a stale value: revision %d → %d, returned %s; want it written", rev1, rev2, got.ResourceVersion)
	}
	if !bytes.HasPrefix(data, []byte("k8s:enc:aesgcm:v1:key2:")) {
		t.Fatalf("stored %q", data)
	}
	if _, err := old.Get(ctx, "ns/a", storage.GetOptions{}); !errors.Is(err, storage.ErrCorrupt) {
		t.Fatalf("the old key still reads the rewritten value: %v", err)
	}
	got, err = s.GuaranteedUpdate(ctx, "ns/a", nil, noop)
	if err != nil {
		t.Fatal(err)
	}
	if _, rev3 := stored(t, c, "ns/a"); rev3 != rev2 || got.ResourceVersion != storage.FormatResourceVersion(rev2) {
		t.Fatalf("no-op update of a current value written: revision %d → %d", rev2, rev3)
	}
}

// testPlaintextMigrates: with identity listed after the encrypting
// provider, values stored before encryption was configured stay readable
// and a no-op update encrypts them.
func testPlaintextMigrates(t *testing.T, c *clientv3.Client) {
	ctx := t.Context()
	plain := newWidgetStore(t, c)
	if _, err := plain.Create(ctx, "ns/a", storagetest.NewWidget("ns", "a", "chartreuse")); err != nil {
		t.Fatal(err)
	}
	s := newWidgetStore(t, c, storage.WithTransformer(widgetTransformer(t, aesgcmProviders("key1", testKey1)+"  - identity: {}\n")))
	got, err := s.Get(ctx, "ns/a", storage.GetOptions{})
	if err != nil || got.Spec.Color != "chartreuse" {
		t.Fatalf("get of a plaintext value: %+v, %v", got, err)
	}
	if _, err := s.GuaranteedUpdate(ctx, "ns/a", nil, func(w *storagetest.Widget) (*storagetest.Widget, error) { return w, nil }); err != nil {
		t.Fatal(err)
	}
	data, _ := stored(t, c, "ns/a")
	if !bytes.HasPrefix(data, []byte("k8s:enc:aesgcm:v1:key1:")) || strings.Contains(string(data), "chartreuse") {
		t.Fatalf("after the no-op update: stored %q, want it encrypted", data)
	}
}

// TestNoTransformerNoCost: without encryption the stored bytes are the
// codec's own, with no copy, and a read allocates what decoding alone
// does.
func TestNoTransformerNoCost(t *testing.T) {
	root := etcdtest.Start(t)
	c := storagetest.NewClient(t, root, "/"+t.Name())
	plain := newWidgetStore(t, c)
	data := []byte(`{"kind":"Widget","apiVersion":"storagetest.apiloom.dev/v1","metadata":{"name":"a","namespace":"ns"},"spec":{"size":1,"color":"red"}}`)
	out, err := plain.ToStorage(t.Context(), "ns/a", data)
	if err != nil || &out[0] != &data[0] {
		t.Fatalf("without a transformer the value was copied or changed: %v", err)
	}
	ctx := t.Context()
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := plain.Decode(ctx, data, 5, "ns/a"); err != nil {
			t.Fatal(err)
		}
	})
	enc := newWidgetStore(t, c, storage.WithTransformer(widgetTransformer(t, aesgcmProviders("key1", testKey1))))
	stored, err := enc.ToStorage(ctx, "ns/a", data)
	if err != nil {
		t.Fatal(err)
	}
	encAllocs := testing.AllocsPerRun(100, func() {
		if _, err := enc.Decode(ctx, stored, 5, "ns/a"); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("allocations per read: %v plaintext, %v aesgcm", allocs, encAllocs)
	if encAllocs <= allocs {
		t.Errorf("a decrypting read allocates %v, a plain one %v: the plain read is not the cheaper", encAllocs, allocs)
	}
}

func BenchmarkDecode(b *testing.B) {
	root := etcdtest.Start(b)
	c := storagetest.NewClient(b, root, "/bench")
	data := []byte(`{"kind":"Widget","apiVersion":"storagetest.apiloom.dev/v1","metadata":{"name":"a","namespace":"ns"},"spec":{"size":1,"color":"red"}}`)
	for _, tc := range []struct{ name, providers string }{
		{"none", ""},
		{"identity", "  - identity: {}\n"},
		{"aesgcm", aesgcmProviders("key1", testKey1)},
		{"secretbox", "  - secretbox:\n      keys:\n      - name: key1\n        secret: " + testKey1 + "\n"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var opts []storage.Option
			if tc.providers != "" {
				opts = append(opts, storage.WithTransformer(widgetTransformer(b, tc.providers)))
			}
			s := newWidgetStore(b, c, opts...)
			stored, err := s.ToStorage(b.Context(), "ns/a", data)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Decode(b.Context(), stored, 5, "ns/a"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
