package etcdclient

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/storage"
)

// TestSpaceKVRefusesWritesWhileDiskLow: with the disk guard tripped every
// kind of write is refused before it reaches etcd, deletes and compactions
// included, while reads pass; once space returns, writes pass again.
func TestSpaceKVRefusesWritesWhileDiskLow(t *testing.T) {
	c := etcdtest.Start(t)
	ctx := t.Context()
	if _, err := c.Put(ctx, "/a", "1"); err != nil {
		t.Fatal(err)
	}
	d := &fakeDisk{free: 1 * mib}
	var logs bytes.Buffer
	reg := prometheus.NewRegistry()
	kv := newSpaceKV(c.KV, newTestGuard(256*mib, d, &logs), quotaMessage(true, 1<<30), nil, reg)
	rev := headRevision(t, c)

	writes := map[string]func() error{
		"put":     func() error { _, err := kv.Put(ctx, "/b", "1"); return err },
		"delete":  func() error { _, err := kv.Delete(ctx, "/a"); return err },
		"compact": func() error { _, err := kv.Compact(ctx, rev); return err },
		"do put":  func() error { _, err := kv.Do(ctx, clientv3.OpPut("/b", "1")); return err },
		"txn put": func() error {
			_, err := kv.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision("/b"), "=", 0)).Then(clientv3.OpPut("/b", "1")).Commit()
			return err
		},
		"txn delete in else": func() error {
			_, err := kv.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision("/a"), "=", 0)).Then(clientv3.OpGet("/a")).Else(clientv3.OpDelete("/a")).Commit()
			return err
		},
		"nested txn": func() error {
			_, err := kv.Txn(ctx).Then(clientv3.OpTxn(nil, []clientv3.Op{clientv3.OpPut("/b", "1")}, nil)).Commit()
			return err
		},
	}
	reads := map[string]func() error{
		"get":    func() error { _, err := kv.Get(ctx, "/a"); return err },
		"do get": func() error { _, err := kv.Do(ctx, clientv3.OpGet("/a")); return err },
		"txn read": func() error {
			_, err := kv.Txn(ctx).Then(clientv3.OpGet("/a")).Else(clientv3.OpGet("/b")).Commit()
			return err
		},
	}
	for name, write := range writes {
		var se *spaceError
		if err := write(); !errors.As(err, &se) || !errors.Is(err, storage.ErrInsufficientStorage) {
			t.Errorf("%s with the disk low: %v, want a spaceError", name, err)
		}
	}
	for name, read := range reads {
		if err := read(); err != nil {
			t.Errorf("%s with the disk low: %v", name, err)
		}
	}
	if got := headRevision(t, c); got != rev {
		t.Errorf("refused writes moved etcd's revision from %d to %d", rev, got)
	}
	if got := counterValue(t, kv.refusals.WithLabelValues(reasonDisk)); got != float64(len(writes)) {
		t.Errorf("%v disk refusals counted, want %d", got, len(writes))
	}

	d.set(1000*mib, nil)
	for name, write := range writes {
		if name == "compact" {
			continue // later writes moved the revision on; compacting is shown above
		}
		// A fresh guard reads statfs at once instead of waiting out the
		// refresh interval.
		kv.guard = newTestGuard(256*mib, d, &logs)
		if err := write(); err != nil {
			t.Errorf("%s with space: %v", name, err)
		}
	}
}

// TestSpaceKVExplainsNoSpace: etcd's NOSPACE becomes a spaceError with
// the message for the setup, wakes the recovery, and is counted.
func TestSpaceKVExplainsNoSpace(t *testing.T) {
	// etcd checks the quota against the backend's size as of its last
	// commit; committing every write makes the puts below meet it however
	// fast they run (by default they may all fit in one 100 ms batch).
	c := etcdtest.Start(t, func(cfg *embed.Config) { cfg.QuotaBackendBytes, cfg.BackendBatchLimit = 1<<20, 1 })
	ctx := t.Context()
	var woken atomic.Int64
	kv := newSpaceKV(c.KV, nil, quotaMessage(false, 0), func() { woken.Add(1) }, nil)
	var err error
	for i := 0; i < 64 && err == nil; i++ {
		_, err = kv.Put(ctx, "/big"+string(rune('a'+i)), strings.Repeat("x", 200<<10))
	}
	var se *spaceError
	if !errors.As(err, &se) || !errors.Is(err, storage.ErrInsufficientStorage) {
		t.Fatalf("put over the quota: %v, want a spaceError", err)
	}
	for _, want := range []string{"space quota", "database space exceeded", "deletes still work", "alarm disarm"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	if woken.Load() != 1 {
		t.Errorf("recovery woken %d times, want 1", woken.Load())
	}
	if got := counterValue(t, kv.refusals.WithLabelValues(reasonQuota)); got != 1 {
		t.Errorf("%v quota refusals counted, want 1", got)
	}
	if _, err := kv.Delete(ctx, "/biga"); err != nil {
		t.Errorf("delete under NOSPACE: %v", err)
	}
}

func TestQuotaMessage(t *testing.T) {
	embedded := quotaMessage(true, 2<<30)
	for _, want := range []string{"2.0 GiB", "--etcd-quota-backend-bytes", "by itself", "deletes still work"} {
		if !strings.Contains(embedded, want) {
			t.Errorf("embedded message %q lacks %q", embedded, want)
		}
	}
	external := quotaMessage(false, 0)
	if strings.Contains(external, "by itself") || !strings.Contains(external, "operator") {
		t.Errorf("external message %q should leave maintenance to etcd's operator", external)
	}
}

func headRevision(t *testing.T, c *clientv3.Client) int64 {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	resp, err := c.Get(ctx, "/", clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
