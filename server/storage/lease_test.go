package storage_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu  sync.Mutex // guards now
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// leaseOf is the lease attached to the widget's key, 0 for none.
func leaseOf(t *testing.T, c *clientv3.Client, key string) clientv3.LeaseID {
	t.Helper()
	resp, err := c.Get(t.Context(), storagetest.Prefix+key)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("get %s: %v %v", key, err, resp)
	}
	return clientv3.LeaseID(resp.Kvs[0].Lease)
}

// TestTTLLeases: with a TTL, every create and every update that changes
// the object attach a lease to its key, of the TTL plus the reuse window;
// writes within the window share one lease, as kube-apiserver's lease
// manager has them do, and a write past it is granted a new one. Without
// a TTL keys carry no lease.
func TestTTLLeases(t *testing.T) {
	root := etcdtest.Start(t)
	c := storagetest.NewClient(t, root, "/ttl")
	clock := &fakeClock{now: time.Unix(1e9, 0)}
	s := storage.New(c, storagetest.Prefix, storagetest.Definition(),
		storage.WithTTL(time.Hour, time.Minute), storage.WithClock(clock.Now))
	ctx := t.Context()

	for _, name := range []string{"a", "b", "c"} {
		if _, err := s.Create(ctx, "ns/"+name, storagetest.NewWidget("ns", name, "red")); err != nil {
			t.Fatal(err)
		}
	}
	first := leaseOf(t, c, "ns/a")
	if first == 0 || leaseOf(t, c, "ns/b") != first || leaseOf(t, c, "ns/c") != first {
		t.Fatalf("leases %x %x %x: want one shared lease", first, leaseOf(t, c, "ns/b"), leaseOf(t, c, "ns/c"))
	}
	ttl, err := c.TimeToLive(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	if ttl.GrantedTTL != 3600+60 {
		t.Fatalf("granted TTL %ds, want the hour plus the minute of reuse", ttl.GrantedTTL)
	}

	// Past the reuse window: a new lease, for the update too.
	clock.Step(61 * time.Second)
	if _, err := s.GuaranteedUpdate(ctx, "ns/a", nil, func(w *storagetest.Widget) (*storagetest.Widget, error) {
		w.Spec.Color = "blue"
		return w, nil
	}); err != nil {
		t.Fatal(err)
	}
	second := leaseOf(t, c, "ns/a")
	if second == 0 || second == first {
		t.Fatalf("update past the window: lease %x, want a new one (first %x)", second, first)
	}
	// An update that changes nothing writes nothing: the lease stays.
	if _, err := s.GuaranteedUpdate(ctx, "ns/b", nil, func(w *storagetest.Widget) (*storagetest.Widget, error) { return w, nil }); err != nil {
		t.Fatal(err)
	}
	if got := leaseOf(t, c, "ns/b"); got != first {
		t.Fatalf("no-op update changed the lease to %x", got)
	}

	plain := storage.New(c, storagetest.Prefix+"plain/", storagetest.Definition())
	if _, err := plain.Create(ctx, "ns/p", storagetest.NewWidget("ns", "p", "red")); err != nil {
		t.Fatal(err)
	}
	if got := leaseOf(t, c, "plain/ns/p"); got != 0 {
		t.Fatalf("a store without TTL attached lease %x", got)
	}
}

// TestTTLManyObjectsFewLeases: 2,500 creates in one reuse window take 3
// leases, one per 1,000 objects (upstream's per-lease bound), not 2,500.
func TestTTLManyObjectsFewLeases(t *testing.T) {
	if testing.Short() {
		t.Skip("2,500 writes")
	}
	c := storagetest.NewClient(t, etcdtest.Start(t), "/many")
	clock := &fakeClock{now: time.Unix(1e9, 0)}
	s := storage.New(c, storagetest.Prefix, storagetest.Definition(), storage.WithTTL(time.Hour, time.Minute), storage.WithClock(clock.Now))
	ctx := t.Context()
	for i := range 2500 {
		name := "w" + strconv.Itoa(i)
		if _, err := s.Create(ctx, "ns/"+name, storagetest.NewWidget("ns", name, "red")); err != nil {
			t.Fatal(err)
		}
	}
	leases, err := c.Leases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(leases.Leases); n != 3 {
		t.Fatalf("%d leases for 2,500 objects, want 3", n)
	}
}

// TestTTLExpiryDeletes: when an object's lease ends, etcd deletes its key
// and the store's watchers see DELETED with the object's last state. The
// lease is revoked by hand, which is what its expiry does, so the test
// needs no waiting for etcd's clock; a write after it, with the lease
// gone, fails once and the next is granted a new lease.
func TestTTLExpiryDeletes(t *testing.T) {
	c := storagetest.NewClient(t, etcdtest.Start(t), "/expire")
	s := storage.New(c, storagetest.Prefix, storagetest.Definition(), storage.WithTTL(time.Hour, time.Minute))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	created, err := s.Create(ctx, "ns/a", storagetest.NewWidget("ns", "a", "red"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Watch(ctx, storage.ListOptions{ResourceVersion: created.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := c.Revoke(ctx, leaseOf(t, c, "ns/a")); err != nil {
		t.Fatal(err)
	}
	evs, err := storage.NewBlocking(w).Next(ctx, nil)
	if err != nil || len(evs) != 1 || evs[0].Type != watch.Deleted || evs[0].Object.Name != "a" || evs[0].Object.Spec.Color != "red" {
		t.Fatalf("after the lease ended: %v %+v, want DELETED of a", err, evs)
	}
	if _, err := s.Get(ctx, "ns/a", storage.GetOptions{}); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("get after expiry: %v, want not found", err)
	}
	if _, err := s.Create(ctx, "ns/b", storagetest.NewWidget("ns", "b", "red")); err == nil {
		t.Fatal("create on the revoked lease succeeded")
	}
	if _, err := s.Create(ctx, "ns/b", storagetest.NewWidget("ns", "b", "red")); err != nil {
		t.Fatalf("create after the revoked lease was forgotten: %v", err)
	}
}
