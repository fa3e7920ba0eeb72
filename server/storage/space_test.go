package storage_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// TestNoSpaceIsInsufficientStorage fills an etcd with a tiny space quota
// until it raises its NOSPACE alarm: creates and updates then fail with
// ErrInsufficientStorage and a detail saying what to do, while reads and
// deletes keep working, as etcd allows them under the alarm.
func TestNoSpaceIsInsufficientStorage(t *testing.T) {
	// etcd checks the quota against the backend's size as of its last
	// commit; committing every write makes the creates below meet it
	// however fast they run (by default they may all fit in one batch).
	c := etcdtest.Start(t, func(cfg *embed.Config) { cfg.QuotaBackendBytes, cfg.BackendBatchLimit = 1<<20, 1 })
	s := newWidgetStore(t, c)
	ctx := t.Context()
	big := strings.Repeat("x", 200<<10)

	var err error
	var created []string
	for i := 0; i < 64 && err == nil; i++ {
		w := storagetest.NewWidget("ns", fmt.Sprint("w", i), "red")
		w.Spec.Color = big
		if _, err = s.Create(ctx, "ns/"+w.Name, w); err == nil {
			created = append(created, "ns/"+w.Name)
		}
	}
	if !errors.Is(err, storage.ErrInsufficientStorage) {
		t.Fatalf("create over the quota: %v, want ErrInsufficientStorage", err)
	}
	se, _ := storage.AsError(err)
	if se == nil || se.Key == "" || !strings.Contains(se.Detail, "space quota") || !strings.Contains(se.Detail, "NOSPACE") {
		t.Errorf("error %#v does not name the key and explain the quota", se)
	}
	if len(created) == 0 {
		t.Fatal("quota too small for the test: nothing was created")
	}

	_, err = s.GuaranteedUpdate(ctx, created[0], nil, func(w *storagetest.Widget) (*storagetest.Widget, error) {
		w.Spec.Size++
		return w, nil
	})
	if !errors.Is(err, storage.ErrInsufficientStorage) {
		t.Errorf("update over the quota: %v, want ErrInsufficientStorage", err)
	}
	if _, err := s.Get(ctx, created[0], storage.GetOptions{}); err != nil {
		t.Errorf("get over the quota: %v", err)
	}
	if _, err := s.GetList(ctx, storage.ListOptions{}); err != nil {
		t.Errorf("list over the quota: %v", err)
	}
	if _, err := s.Delete(ctx, created[0], nil); err != nil {
		t.Errorf("delete over the quota: %v", err)
	}
}

// TestNoSpaceAnswersMatchWhatIsStored: writes racing past the quota are
// often applied by etcd although it answers NOSPACE. A create or update
// answered ErrInsufficientStorage must not be stored, and one answered
// with success must be, at the returned resourceVersion.
func TestNoSpaceAnswersMatchWhatIsStored(t *testing.T) {
	const writers = 16
	big := strings.Repeat("x", 64<<10)
	check := func(t *testing.T, s *storage.Store[*storagetest.Widget], key string, err error, want *storagetest.Widget) {
		t.Helper()
		got, gerr := s.Get(t.Context(), key, storage.GetOptions{})
		switch {
		case errors.Is(err, storage.ErrInsufficientStorage):
			if gerr == nil && got.Spec.Color == want.Spec.Color {
				t.Errorf("%s: answered %v, but stored", key, err)
			}
		case err != nil:
			t.Errorf("%s: %v", key, err)
		case gerr != nil || got.ResourceVersion != want.ResourceVersion || got.Spec.Color != want.Spec.Color:
			t.Errorf("%s: answered success at %s, stored %v (%v)", key, want.ResourceVersion, got, gerr)
		}
	}
	t.Run("create", func(t *testing.T) {
		c := etcdtest.Start(t, func(cfg *embed.Config) { cfg.QuotaBackendBytes = 4 << 20 })
		s := newWidgetStore(t, c)
		var wg sync.WaitGroup
		for g := range writers {
			wg.Go(func() {
				for i := 0; ; i++ {
					key := fmt.Sprintf("ns/w%d-%d", g, i)
					w := storagetest.NewWidget("ns", key[3:], big)
					out, err := s.Create(t.Context(), key, w)
					if err == nil {
						w = out
					}
					check(t, s, key, err, w)
					if err != nil {
						return
					}
				}
			})
		}
		wg.Wait()
	})
	t.Run("update", func(t *testing.T) {
		c := etcdtest.Start(t, func(cfg *embed.Config) { cfg.QuotaBackendBytes = 4 << 20 })
		s := newWidgetStore(t, c)
		for g := range writers {
			if _, err := s.Create(t.Context(), fmt.Sprintf("ns/w%d", g), storagetest.NewWidget("ns", fmt.Sprint("w", g), "")); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		for g := range writers {
			key := fmt.Sprintf("ns/w%d", g)
			wg.Go(func() {
				for {
					var want *storagetest.Widget
					out, err := s.GuaranteedUpdate(t.Context(), key, nil, func(w *storagetest.Widget) (*storagetest.Widget, error) {
						w.Spec.Color += big
						want = w.DeepCopyObject().(*storagetest.Widget)
						return w, nil
					})
					if err == nil {
						want = out
					}
					check(t, s, key, err, want)
					if err != nil {
						return
					}
				}
			})
		}
		wg.Wait()
	})
}

// TestSpaceGuardErrorKeepsItsText: an error from the etcd client that Is
// ErrInsufficientStorage (what the server's disk guard returns) reaches
// the caller as ErrInsufficientStorage with its text as the detail, and
// nothing is written.
func TestSpaceGuardErrorKeepsItsText(t *testing.T) {
	c := etcdtest.Start(t)
	kv := &refusingKV{KV: c.KV}
	kv.refuse.Store(true)
	s := newWidgetStore(t, &clientv3.Client{KV: kv, Watcher: c.Watcher})

	_, err := s.Create(t.Context(), "ns/a", storagetest.NewWidget("ns", "a", "red"))
	se, ok := storage.AsError(err)
	if !errors.Is(err, storage.ErrInsufficientStorage) || !ok || se.Detail != errDiskLow.Error() || se.Key != "ns/a" {
		t.Fatalf("create refused by the guard: %v, want ErrInsufficientStorage with the guard's text", err)
	}
	if resp, err := c.Get(t.Context(), storagetest.Prefix, clientv3.WithPrefix(), clientv3.WithCountOnly()); err != nil || resp.Count != 0 {
		t.Fatalf("refused create wrote something: %v, %v", resp, err)
	}
}

// testCompactorPausesWithoutSpace: while writes are refused for lack of
// space the compactor writes nothing and logs the pause once, not at every
// tick; once space returns it compacts again and says so.
func testCompactorPausesWithoutSpace(t *testing.T, c *clientv3.Client) {
	kv := &refusingKV{KV: c.KV}
	kv.refuse.Store(true)
	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	ticks := make(chan time.Time)
	cp := storage.NewCompactor(&clientv3.Client{KV: kv}, time.Hour, log, storage.WithCompactTicks(ticks))
	runCtx, stop := context.WithCancel(t.Context())
	defer stop()
	done := make(chan struct{})
	go func() { cp.Run(runCtx); close(done) }()

	if _, err := c.Put(t.Context(), "/k", "v"); err != nil {
		t.Fatal(err)
	}
	rev := currentRevision(t, c)
	// Each send waits for Run to finish the previous step: after five
	// sends, four steps (two intervals' worth, twice) are done.
	for range 5 {
		ticks <- time.Time{}
	}
	if got := cp.CompactedRevision(); got != 0 {
		t.Errorf("compacted to %d while writes were refused", got)
	}
	if got := currentRevision(t, c); got != rev {
		t.Errorf("etcd revision moved from %d to %d while writes were refused", rev, got)
	}
	if n := strings.Count(logs.String(), "etcd compaction paused"); n != 1 {
		t.Errorf("pause logged %d times, want once:\n%s", n, logs.String())
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("a refused compaction was logged as an error:\n%s", logs.String())
	}
	if refused := kv.refused.Load(); refused < 4 {
		t.Errorf("compactor tried %d writes in 4 ticks, want one per tick", refused)
	}

	// Space returns: within the next two finished steps the compactor
	// records a revision and compacts it.
	kv.refuse.Store(false)
	for range 3 {
		ticks <- time.Time{}
	}
	if got := cp.CompactedRevision(); got < rev {
		t.Errorf("compacted to %d after space returned, want at least %d", got, rev)
	}
	if !strings.Contains(logs.String(), "etcd compaction resumed") {
		t.Errorf("resume not logged:\n%s", logs.String())
	}
	stop()
	<-done
}

func currentRevision(t *testing.T, c *clientv3.Client) int64 {
	t.Helper()
	resp, err := c.Get(t.Context(), "/", clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

// errDiskLow stands for the server's disk guard's error.
var errDiskLow = fmt.Errorf("%w: the disk is nearly full; free space on it", storage.ErrInsufficientStorage)

// refusingKV refuses every write with errDiskLow while refuse is set, as
// the server's guard does in front of the embedded etcd.
type refusingKV struct {
	clientv3.KV
	refuse  atomic.Bool
	refused atomic.Int64
}

func (k *refusingKV) Txn(ctx context.Context) clientv3.Txn {
	return &refusingTxn{Txn: k.KV.Txn(ctx), kv: k}
}

func (k *refusingKV) Compact(ctx context.Context, rev int64, opts ...clientv3.CompactOption) (*clientv3.CompactResponse, error) {
	if k.refuse.Load() {
		k.refused.Add(1)
		return nil, errDiskLow
	}
	return k.KV.Compact(ctx, rev, opts...)
}

type refusingTxn struct {
	clientv3.Txn
	kv *refusingKV
}

func (t *refusingTxn) If(cs ...clientv3.Cmp) clientv3.Txn   { t.Txn = t.Txn.If(cs...); return t }
func (t *refusingTxn) Then(ops ...clientv3.Op) clientv3.Txn { t.Txn = t.Txn.Then(ops...); return t }
func (t *refusingTxn) Else(ops ...clientv3.Op) clientv3.Txn { t.Txn = t.Txn.Else(ops...); return t }
func (t *refusingTxn) Commit() (*clientv3.TxnResponse, error) {
	if t.kv.refuse.Load() {
		t.kv.refused.Add(1)
		return nil, errDiskLow
	}
	return t.Txn.Commit()
}
