package etcdclient

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	clientv3 "go.etcd.io/etcd/client/v3"
)

func TestDefragRule(t *testing.T) {
	r := defragRule{minBytes: 100 * mib, percent: 45}
	for _, c := range []struct {
		size, inUse int64
		want        bool
	}{
		{size: 1000 * mib, inUse: 550 * mib, want: true},  // 45% and 450 MiB free
		{size: 1000 * mib, inUse: 560 * mib, want: false}, // 44%
		{size: 200 * mib, inUse: 100 * mib, want: true},   // 50%, 100 MiB
		{size: 150 * mib, inUse: 60 * mib, want: false},   // 60%, but 90 MiB
		{size: 0, inUse: 0, want: false},
	} {
		if got := r.due(c.size, c.inUse); got != c.want {
			t.Errorf("due(%d MiB, %d MiB in use) = %v, want %v", c.size/mib, c.inUse/mib, got, c.want)
		}
	}
	if (defragRule{minBytes: 0, percent: 0}).due(1000*mib, 0) {
		t.Error("percent 0 should switch the rule off")
	}
}

// churnConn starts an embedded etcd through Connect with the given
// defragmentation rule, runs its maintenance goroutine, and fills it with
// 16 MiB of values of which it then deletes nine in ten, so that a
// compaction leaves its file mostly free pages. It returns the keys kept.
func churnConn(t *testing.T, rule defragRule) (*Conn, []string) {
	t.Helper()
	var logs bytes.Buffer
	b, err := Connect(t.Context(), Config{Dir: t.TempDir(), DefragReclaimableBytes: rule.minBytes,
		DefragReclaimablePercent: int(rule.percent)}, testLogger(&logs), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); b.RunQuotaRecovery(ctx) }()
	t.Cleanup(func() { stop(); <-done })

	value := strings.Repeat("v", 8<<10)
	for batch := range 20 {
		var puts []clientv3.Op
		for i := range 100 {
			puts = append(puts, clientv3.OpPut(fmt.Sprintf("/churn/%02d/%03d", batch, i), value))
		}
		if _, err := b.Client.Txn(t.Context()).Then(puts...).Commit(); err != nil {
			t.Fatal(err)
		}
	}
	for batch := range 20 {
		if batch%10 == 0 {
			continue
		}
		if _, err := b.Client.Delete(t.Context(), fmt.Sprintf("/churn/%02d/", batch), clientv3.WithPrefix()); err != nil {
			t.Fatal(err)
		}
	}
	var kept []string
	for _, batch := range []int{0, 10} {
		for i := range 100 {
			kept = append(kept, fmt.Sprintf("/churn/%02d/%03d", batch, i))
		}
	}
	return b, kept
}

func dbStatus(t *testing.T, b *Conn) (size, inUse int64) {
	t.Helper()
	st, err := b.Client.Status(t.Context(), b.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	return st.DbSize, st.DbSizeInUse
}

// compactNow compacts the embedded etcd up to now through the client's
// KV, as the compactor does.
func compactNow(t *testing.T, b *Conn) {
	t.Helper()
	head, err := b.Client.Get(t.Context(), "/", clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Client.Compact(t.Context(), head.Header.Revision); err != nil {
		t.Fatal(err)
	}
}

// TestDefragAfterCompaction: a compaction that leaves the file mostly
// free pages is followed by a defragmentation that shrinks it; the kept
// values read back, and a watch opened before keeps delivering.
func TestDefragAfterCompaction(t *testing.T) {
	b, kept := churnConn(t, defragRule{minBytes: 4 * mib, percent: 45})
	before, _ := dbStatus(t, b)
	head, err := b.Client.Get(t.Context(), "/", clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	watch := b.Client.Watch(t.Context(), "/watched/", clientv3.WithPrefix(), clientv3.WithRev(head.Header.Revision+1))

	compactNow(t, b)
	checks := b.recovery.defrag.checks
	waitFor(t, "a defragmentation after the compaction", func() bool {
		return testutil.ToFloat64(checks.WithLabelValues(defragDone)) == 1
	})
	after, inUse := dbStatus(t, b)
	if after > before/2 {
		t.Fatalf("database file %d bytes after defragmentation, %d before: want it at least halved", after, before)
	}
	// The look reads the size after the compaction, which may have grown it.
	if got := testutil.ToFloat64(b.recovery.defrag.reclaimed); got < float64(before-after) {
		t.Errorf("reclaimed bytes metric %v, want at least %d", got, before-after)
	}
	t.Logf("file %d -> %d bytes (in use %d)", before, after, inUse)

	resp, err := b.Client.Get(t.Context(), "/churn/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != len(kept) {
		t.Fatalf("%d values read back after defragmentation, want %d", len(resp.Kvs), len(kept))
	}
	for i, kv := range resp.Kvs {
		if string(kv.Key) != kept[i] || len(kv.Value) != 8<<10 {
			t.Fatalf("value %d: key %s, %d bytes; want %s, 8 KiB", i, kv.Key, len(kv.Value), kept[i])
		}
	}
	if _, err := b.Client.Put(t.Context(), "/watched/after", "x"); err != nil {
		t.Fatal(err)
	}
	select {
	case w := <-watch:
		if err := w.Err(); err != nil || len(w.Events) != 1 || string(w.Events[0].Kv.Key) != "/watched/after" {
			t.Fatalf("watch after defragmentation: %v, %d events", err, len(w.Events))
		}
	case <-time.After(30 * time.Second):
		t.Fatal("watch opened before the defragmentation delivered nothing within 30s")
	}

	// A second compaction finds nothing worth a copy.
	compactNow(t, b)
	waitFor(t, "a look after the second compaction", func() bool {
		return testutil.ToFloat64(checks.WithLabelValues(defragNotNeeded)) == 1
	})
	if got := testutil.ToFloat64(checks.WithLabelValues(defragDone)); got != 1 {
		t.Errorf("%v defragmentations after the second compaction, want still 1", got)
	}
}

// TestDefragNotNeeded: below the rule's floor a compaction is followed by
// a look but no defragmentation, and the file keeps its size.
func TestDefragNotNeeded(t *testing.T) {
	b, _ := churnConn(t, defragRule{minBytes: 1 << 30, percent: 45})
	before, _ := dbStatus(t, b)
	compactNow(t, b)
	checks := b.recovery.defrag.checks
	waitFor(t, "a look after the compaction", func() bool {
		return testutil.ToFloat64(checks.WithLabelValues(defragNotNeeded)) == 1
	})
	if got := testutil.ToFloat64(checks.WithLabelValues(defragDone)); got != 0 {
		t.Fatalf("%v defragmentations below the floor, want 0", got)
	}
	if after, _ := dbStatus(t, b); after < before {
		t.Errorf("file shrank from %d to %d bytes without a defragmentation", before, after)
	}
}

// TestDefragOff: percent 0 installs nothing; compactions stay as they
// were.
func TestDefragOff(t *testing.T) {
	b, _ := churnConn(t, defragRule{})
	if b.recovery.defrag != nil {
		t.Fatal("a compaction defragmenter with the rule off")
	}
	compactNow(t, b)
}

// TestDefragWaitsForDisk: while the disk guard refuses writes, or the disk
// has no room for the copy beside the guard's reserve, the look does not
// defragment.
func TestDefragWaitsForDisk(t *testing.T) {
	b, _ := churnConn(t, defragRule{}) // no look of its own
	head, err := b.Client.Get(t.Context(), "/", clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Client.Compact(t.Context(), head.Header.Revision, clientv3.WithCompactPhysical()); err != nil {
		t.Fatal(err)
	}
	size, inUse := dbStatus(t, b)
	var logs bytes.Buffer
	d := &fakeDisk{free: 1 * mib}
	guard := newTestGuard(256*mib, d, &logs)
	defrag := newCompactionDefrag(b.Client.Maintenance, b.Endpoint(), guard, defragRule{minBytes: 4 * mib, percent: 45}, testLogger(&logs), nil)
	if out, err := defrag.check(t.Context()); out != defragWaitingForDisk || err != nil {
		t.Fatalf("guard refusing writes: %s, %v", out, err)
	}
	// Writes accepted again, but the copy would eat into the reserve.
	d.set(256*mib+256*mib/4+uint64(inUse)-1, nil)
	if _, err := guard.freeNow(); err != nil || guard.isLow() {
		t.Fatal("guard still low at its resume point")
	}
	d.set(256*mib+uint64(inUse)-1, nil)
	if out, err := defrag.check(t.Context()); out != defragWaitingForDisk || err != nil {
		t.Fatalf("no room for the copy: %s, %v", out, err)
	}
	if after, _ := dbStatus(t, b); after < size {
		t.Fatalf("file shrank from %d to %d bytes: defragmented without room", size, after)
	}
	d.set(256*mib+uint64(inUse), nil)
	if out, err := defrag.check(t.Context()); out != defragDone || err != nil {
		t.Fatalf("with room: %s, %v (size %d, in use %d)", out, err, size, inUse)
	}
}
