package etcdclient

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apiloom/apiloom/server/storage"
)

const mib = 1 << 20

// fakeDisk is an injected statfs: free bytes the test sets, and how often
// it was asked.
type fakeDisk struct {
	mu    sync.Mutex // guards the fields below
	free  uint64
	err   error
	calls int
}

func (d *fakeDisk) statfs(string) (uint64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls++
	return d.free, d.err
}

func (d *fakeDisk) set(free uint64, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.free, d.err = free, err
}

func (d *fakeDisk) callCount() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.calls
}

func newTestGuard(minFree uint64, d *fakeDisk, logs *bytes.Buffer) *diskGuard {
	return newDiskGuard("/data/etcd", minFree, d.statfs, slog.New(slog.NewTextHandler(logs, nil)))
}

// TestDiskGuardThresholdAndHysteresis: writes are refused below the
// threshold and accepted again only at a quarter above it; each change is
// logged once.
func TestDiskGuardThresholdAndHysteresis(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &fakeDisk{free: 1000 * mib}
		var logs bytes.Buffer
		g := newTestGuard(256*mib, d, &logs)
		step := func(free uint64, wantLow bool) {
			t.Helper()
			d.set(free, nil)
			time.Sleep(guardRefresh)
			if err := g.check(); (err != nil) != wantLow {
				t.Fatalf("%d MiB free: check() = %v, want refused=%v", free/mib, err, wantLow)
			}
		}
		step(1000*mib, false)
		step(257*mib, false)
		step(256*mib, false) // the threshold itself is enough
		step(255*mib, true)
		step(300*mib, true) // above the threshold, below the hysteresis
		step(319*mib, true)
		step(320*mib, false) // 256 + 256/4
		step(300*mib, false) // above the threshold: stays accepting
		step(10*mib, true)

		if n := strings.Count(logs.String(), "refusing writes"); n != 2 {
			t.Errorf("trip logged %d times, want 2:\n%s", n, logs.String())
		}
		if n := strings.Count(logs.String(), "accepting writes"); n != 1 {
			t.Errorf("recovery logged %d times, want 1:\n%s", n, logs.String())
		}
	})
}

// TestDiskGuardRefreshInterval: one statfs serves every check for
// guardRefresh, so a burst of writes costs one statfs, and a change of
// free space is seen within guardRefresh.
func TestDiskGuardRefreshInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &fakeDisk{free: 1000 * mib}
		var logs bytes.Buffer
		g := newTestGuard(256*mib, d, &logs)
		for range 1000 {
			if err := g.check(); err != nil {
				t.Fatal(err)
			}
		}
		if n := d.callCount(); n != 1 {
			t.Fatalf("1000 checks within %v made %d statfs calls, want 1", guardRefresh, n)
		}
		d.set(1*mib, nil)
		time.Sleep(guardRefresh - time.Millisecond)
		if err := g.check(); err != nil {
			t.Fatalf("refreshed before %v: %v", guardRefresh, err)
		}
		time.Sleep(time.Millisecond)
		if err := g.check(); err == nil {
			t.Fatalf("disk full for %v, still accepting writes", guardRefresh)
		}
		if n := d.callCount(); n != 2 {
			t.Fatalf("%d statfs calls, want 2", n)
		}
	})
}

// TestDiskGuardStatfsFailureKeepsState: a failing statfs neither refuses
// writes on its own nor lets them through once refused; it is logged once.
func TestDiskGuardStatfsFailureKeepsState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &fakeDisk{free: 1000 * mib}
		var logs bytes.Buffer
		g := newTestGuard(256*mib, d, &logs)
		d.set(0, errors.New("statfs: input/output error"))
		for range 3 {
			if err := g.check(); err != nil {
				t.Fatalf("statfs failing from the start: %v", err)
			}
			time.Sleep(guardRefresh)
		}
		d.set(1*mib, nil)
		if err := g.check(); err == nil {
			t.Fatal("disk full, writes accepted")
		}
		d.set(0, errors.New("statfs: input/output error"))
		for range 3 {
			time.Sleep(guardRefresh)
			if err := g.check(); err == nil {
				t.Fatal("statfs failing after the disk filled: writes accepted")
			}
		}
		if n := strings.Count(logs.String(), "cannot read free disk space"); n != 2 {
			t.Errorf("statfs failure logged %d times, want once per failing stretch (2):\n%s", n, logs.String())
		}
	})
}

// TestDiskGuardError: the refusal is an ErrInsufficientStorage whose text
// says which disk, how full, and what to do.
func TestDiskGuardError(t *testing.T) {
	d := &fakeDisk{free: 100 * mib}
	var logs bytes.Buffer
	err := newTestGuard(256*mib, d, &logs).check()
	if !errors.Is(err, storage.ErrInsufficientStorage) {
		t.Fatalf("check() = %v, want ErrInsufficientStorage", err)
	}
	for _, want := range []string{"/data/etcd", "100.0 MiB free", "256.0 MiB", "--etcd-min-free-disk-bytes", "320.0 MiB", "free space on that disk", "reads keep working"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
}

// TestCheckStartSpace: below the start floor the server refuses to start;
// between it and the threshold it starts with writes refused.
func TestCheckStartSpace(t *testing.T) {
	var logs bytes.Buffer
	d := &fakeDisk{free: uint64(etcdStartFloorBytes) - 1}
	g := newTestGuard(256*mib, d, &logs)
	err := checkStartSpace(g)
	if err == nil || !strings.Contains(err.Error(), "/data/etcd") || !strings.Contains(err.Error(), "free space on it") {
		t.Fatalf("start below the floor: %v, want a refusal naming the disk", err)
	}

	d.set(uint64(etcdStartFloorBytes), nil)
	g = newTestGuard(256*mib, d, &logs)
	if err := checkStartSpace(g); err != nil {
		t.Fatalf("start above the floor: %v", err)
	}
	if g.check() == nil {
		t.Fatal("started below the threshold with writes accepted")
	}

	d.set(300*mib, nil)
	g = newTestGuard(256*mib, d, &logs)
	if err := checkStartSpace(g); err != nil || g.check() != nil {
		t.Fatalf("start above the threshold: %v, %v", err, g.check())
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[uint64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 256 * mib: "256.0 MiB", 2 << 30: "2.0 GiB", 1536 * mib: "1.5 GiB"} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
