package etcdclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/apiloom/apiloom/internal/etcdtest"
)

const testQuota = 2 << 20

// fillToNoSpace puts 16 KiB values until etcd raises its NOSPACE alarm
// and returns the keys it wrote. The values are small beside the quota, so
// that the database is then well over the recovery's target (90% of it).
func fillToNoSpace(t *testing.T, c *clientv3.Client) []string {
	t.Helper()
	var keys []string
	for i := range 1000 {
		k := fmt.Sprintf("/fill/%04d", i)
		_, err := c.Put(t.Context(), k, strings.Repeat("x", 16<<10))
		if errors.Is(err, rpctypes.ErrNoSpace) {
			// A put refused in etcd's apply raises the alarm afterwards,
			// in a goroutine of its own: wait for it.
			deadline := time.Now().Add(30 * time.Second)
			for !noSpaceAlarm(t, c) {
				if time.Now().After(deadline) {
					t.Fatal("NOSPACE refused a put, but no NOSPACE alarm within 30s")
				}
				time.Sleep(10 * time.Millisecond)
			}
			return keys
		}
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	t.Fatal("no NOSPACE after 1000 puts")
	return nil
}

func noSpaceAlarm(t *testing.T, c *clientv3.Client) bool {
	t.Helper()
	resp, err := c.AlarmList(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range resp.Alarms {
		if a.Alarm == pb.AlarmType_NOSPACE {
			return true
		}
	}
	return false
}

func newTestRecovery(c *clientv3.Client, guard *diskGuard, logs *bytes.Buffer) *quotaRecovery {
	return newQuotaRecovery(c.KV, c.Maintenance, c.Endpoints()[0], testQuota, guard, slog.New(slog.NewTextHandler(logs, nil)), nil)
}

// TestQuotaRecoveryAfterDeletes: over the quota the recovery waits (and
// says so once); after the objects are deleted it compacts, defragments
// and disarms the alarm, and writes work again.
func TestQuotaRecoveryAfterDeletes(t *testing.T) {
	c := etcdtest.Start(t, func(cfg *embed.Config) { cfg.QuotaBackendBytes = testQuota })
	keys := fillToNoSpace(t, c)
	var logs bytes.Buffer
	r := newTestRecovery(c, nil, &logs)

	for range 2 {
		done, err := r.step(t.Context())
		if done || err != nil {
			t.Fatalf("step over the quota: done=%v, %v", done, err)
		}
	}
	if !noSpaceAlarm(t, c) {
		t.Fatal("alarm disarmed while the database is still over the quota")
	}
	if n := strings.Count(logs.String(), "over its space quota"); n != 1 {
		t.Errorf("waiting logged %d times, want once:\n%s", n, logs.String())
	}
	if over, same := counterValue(t, r.steps.WithLabelValues(outcomeOverQuota)), counterValue(t, r.steps.WithLabelValues(outcomeUnchanged)); over != 1 || same != 1 {
		t.Errorf("steps counted: over_quota %v, unchanged %v; want 1 and 1 (nothing deleted before the second)", over, same)
	}

	for _, k := range keys {
		if _, err := c.Delete(t.Context(), k); err != nil {
			t.Fatalf("delete under NOSPACE: %v", err)
		}
	}
	done, err := r.step(t.Context())
	if !done || err != nil {
		t.Fatalf("step after deletes: done=%v, %v", done, err)
	}
	if noSpaceAlarm(t, c) {
		t.Fatal("alarm still raised after recovery")
	}
	st, err := c.Status(t.Context(), c.Endpoints()[0])
	if err != nil {
		t.Fatal(err)
	}
	if st.DbSize > testQuota-testQuota/10 {
		t.Errorf("database is %d bytes after recovery, want defragmented under %d", st.DbSize, testQuota-testQuota/10)
	}
	if _, err := c.Put(t.Context(), "/after", "v"); err != nil {
		t.Fatalf("put after recovery: %v", err)
	}
	if n := counterValue(t, r.steps.WithLabelValues(outcomeDisarmed)); n != 1 {
		t.Errorf("disarmed steps counted: %v, want 1", n)
	}
	if !strings.Contains(logs.String(), "disarmed") {
		t.Errorf("recovery not logged:\n%s", logs.String())
	}
	if done, err := r.step(t.Context()); !done || err != nil {
		t.Errorf("step without an alarm: done=%v, %v", done, err)
	}
}

// TestQuotaRecoveryWaitsForDisk: while the disk guard refuses writes the
// recovery neither compacts nor defragments (both write), even when the
// database would fit; once the disk has room it recovers.
func TestQuotaRecoveryWaitsForDisk(t *testing.T) {
	c := etcdtest.Start(t, func(cfg *embed.Config) { cfg.QuotaBackendBytes = testQuota })
	keys := fillToNoSpace(t, c)
	for _, k := range keys {
		if _, err := c.Delete(t.Context(), k); err != nil {
			t.Fatal(err)
		}
	}
	var logs bytes.Buffer
	d := &fakeDisk{free: 1 * mib}
	guard := newTestGuard(256*mib, d, &logs)
	r := newTestRecovery(c, guard, &logs)
	rev := headRevision(t, c)
	if done, err := r.step(t.Context()); done || err != nil {
		t.Fatalf("step with the disk low: done=%v, %v", done, err)
	}
	if _, err := c.Get(t.Context(), "/", clientv3.WithRev(rev-1)); err != nil {
		t.Errorf("history compacted while the disk was low: %v", err)
	}
	if !noSpaceAlarm(t, c) {
		t.Fatal("alarm disarmed while the disk was low")
	}

	d.set(1000*mib, nil)
	r.guard = newTestGuard(256*mib, d, &logs) // reads statfs at once
	if done, err := r.step(t.Context()); !done || err != nil {
		st, _ := c.Status(t.Context(), c.Endpoints()[0])
		t.Fatalf("step with space: done=%v, %v; size %d in use %d; %s", done, err, st.DbSize, st.DbSizeInUse, logs.String())
	}
	if noSpaceAlarm(t, c) {
		t.Fatal("alarm still raised")
	}
}

// TestQuotaRecoveryRun: Run looks at start (an alarm raised before a
// restart), sleeps while there is nothing to do, wakes on notify, and
// retries every interval until the alarm is gone.
func TestQuotaRecoveryRun(t *testing.T) {
	c := etcdtest.Start(t, func(cfg *embed.Config) { cfg.QuotaBackendBytes = testQuota })
	keys := fillToNoSpace(t, c)
	for _, k := range keys {
		if _, err := c.Delete(t.Context(), k); err != nil {
			t.Fatal(err)
		}
	}
	var logs bytes.Buffer
	r := newTestRecovery(c, nil, &logs)
	r.interval = 20 * time.Millisecond
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	waitFor(t, "the alarm raised before Run to be disarmed", func() bool { return !noSpaceAlarm(t, c) })

	// Raised again: the recovery retries until deletes make room.
	keys = fillToNoSpace(t, c)
	r.notify()
	for _, k := range keys {
		if _, err := c.Delete(t.Context(), k); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the second alarm to be disarmed", func() bool { return !noSpaceAlarm(t, c) })
	if _, err := c.Put(t.Context(), "/after", "v"); err != nil {
		t.Fatalf("put after recovery: %v", err)
	}
	stop()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
}

// waitFor polls cond until it holds, failing the test after 30s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
