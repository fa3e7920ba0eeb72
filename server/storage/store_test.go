package storage_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

var _ storage.Interface[*storagetest.Widget] = (*storage.Store[*storagetest.Widget])(nil)

func newWidgetStore(t testing.TB, c *clientv3.Client, opts ...storage.Option) *storage.Store[*storagetest.Widget] {
	t.Helper()
	return storage.New(c, storagetest.Prefix, storagetest.Definition(), opts...)
}

// TestStore runs the store's own tests on one shared etcd, each test in
// its own keyspace.
func TestStore(t *testing.T) {
	root := etcdtest.Start(t)
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, *clientv3.Client)
	}{
		{"StoredForm", testStoredForm},
		{"CorruptListReported", testCorruptListReported},
		{"CorruptLoggedOncePerRevision", testCorruptLoggedOncePerRevision},
		{"CorruptWatchRepairWithoutSelector", testCorruptWatchRepairWithoutSelector},
		{"ClusterScoped", testClusterScoped},
		{"DeleteRetriesOnConcurrentWrite", testDeleteRetriesOnConcurrentWrite},
		{"WatchBookmarksFromProgress", testWatchBookmarksFromProgress},
		{"WatchSlowConsumerExpires", testWatchSlowConsumerExpires},
		{"WatchEndsWithItsContext", testWatchEndsWithItsContext},
		{"CompactorOneReplicaPerInterval", testCompactorOneReplicaPerInterval},
		{"CompactorRun", testCompactorRun},
		{"CompactorPausesWithoutSpace", testCompactorPausesWithoutSpace},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, storagetest.NewClient(t, root, "/"+t.Name()))
		})
	}
}

func TestConformance(t *testing.T) {
	storagetest.Run(t, storagetest.Config{
		NewStore: func(t *testing.T, c *clientv3.Client) storage.Interface[*storagetest.Widget] {
			// A small sync page makes watches' initial events cross pages.
			return newWidgetStore(t, c, storage.WithSyncPageSize(1))
		},
	})
}

func testStoredForm(t *testing.T, c *clientv3.Client) {
	s := newWidgetStore(t, c)
	in := storagetest.NewWidget("ns", "a", "red")
	out, err := s.Create(t.Context(), "ns/a", in)
	if err != nil {
		t.Fatal(err)
	}
	if in.ResourceVersion != "" || in.Kind != "" {
		t.Errorf("Create changed its argument: %+v", in.TypeMeta)
	}
	resp, err := c.Get(t.Context(), storagetest.Prefix+"ns/a")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("raw get: %v", err)
	}
	var stored map[string]any
	if err := json.Unmarshal(resp.Kvs[0].Value, &stored); err != nil {
		t.Fatal(err)
	}
	meta := stored["metadata"].(map[string]any)
	if stored["kind"] != "Widget" || stored["apiVersion"] != "storagetest.apiloom.dev/v1" || meta["resourceVersion"] != nil {
		t.Errorf("stored %s: want kind and apiVersion, no resourceVersion", resp.Kvs[0].Value)
	}
	if out.ResourceVersion != storage.FormatResourceVersion(resp.Kvs[0].ModRevision) {
		t.Errorf("resourceVersion %s, mod revision %d", out.ResourceVersion, resp.Kvs[0].ModRevision)
	}
}

func testClusterScoped(t *testing.T, c *clientv3.Client) {
	def := storagetest.Definition()
	def.Namespaced = false
	s := storage.New(c, "/registry/storagetest.apiloom.dev/gadgets", def)
	ctx := t.Context()
	if s.Prefix() != "/registry/storagetest.apiloom.dev/gadgets/" {
		t.Errorf("prefix %q", s.Prefix())
	}
	if _, err := s.Create(ctx, storage.Key("", "r"), storagetest.NewWidget("", "r", "red")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, storage.Key("ns", "r"), storagetest.NewWidget("ns", "r", "red")); !errors.Is(err, storage.ErrInvalidKey) {
		t.Errorf("namespaced key: %v, want ErrInvalidKey", err)
	}
	// A namespace means nothing to a cluster-scoped list.
	l, err := s.GetList(ctx, storage.ListOptions{Namespace: "ns"})
	if err != nil || len(l.Items) != 1 {
		t.Errorf("list: %v, %v", l, err)
	}
}

// hookedClient is a second client to root's etcd, in the keyspace of the
// test's client, whose first transaction runs hook first: a real concurrent
// write between a store's read and its write.
func hookedClient(t *testing.T, c *clientv3.Client, hook func()) *clientv3.Client {
	t.Helper()
	hc := storagetest.NewClient(t, c, "/"+t.Name())
	hc.KV = &hookKV{KV: hc.KV, hook: hook}
	return hc
}

type hookKV struct {
	clientv3.KV
	once sync.Once
	hook func()
}

func (h *hookKV) Txn(ctx context.Context) clientv3.Txn {
	h.once.Do(h.hook)
	return h.KV.Txn(ctx)
}

func testDeleteRetriesOnConcurrentWrite(t *testing.T, c *clientv3.Client) {
	s := newWidgetStore(t, c)
	ctx := t.Context()
	if _, err := s.Create(ctx, "ns/a", storagetest.NewWidget("ns", "a", "red")); err != nil {
		t.Fatal(err)
	}
	grow := func() {
		if _, err := s.GuaranteedUpdate(ctx, "ns/a", nil, func(w *storagetest.Widget) (*storagetest.Widget, error) {
			w.Spec.Size++
			return w, nil
		}); err != nil {
			t.Error(err)
		}
	}

	out, err := newWidgetStore(t, hookedClient(t, c, grow)).Delete(ctx, "ns/a", nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.Spec.Size != 2 {
		t.Errorf("deleted state has size %d, want the concurrent write's 2", out.Spec.Size)
	}

	// Preconditions are checked again against the fresh state.
	created, err := s.Create(ctx, "ns/a", storagetest.NewWidget("ns", "a", "red"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = newWidgetStore(t, hookedClient(t, c, grow)).Delete(ctx, "ns/a", &storage.Preconditions{ResourceVersion: &created.ResourceVersion})
	if !errors.Is(err, storage.ErrPrecondition) {
		t.Errorf("delete after a concurrent write with the old resourceVersion as precondition: %v, want ErrPrecondition", err)
	}
}
