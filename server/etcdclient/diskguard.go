package etcdclient

import (
	"fmt"
	"log/slog"
	"sync"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/storage/wal"
)

const (
	// DefaultMinFreeDiskBytes is how much free space the disk guard
	// keeps under the embedded etcd by default (256 MiB):
	//   - 64 MB for the next WAL segment. etcd preallocates it right after
	//     each segment cut, and if that allocation fails its WAL pipeline
	//     stops for good and the next cut is fatal (storage/wal
	//     file_pipeline.go), even after space returns;
	//   - 32 MiB for bbolt, which grows its file in 16 MiB steps;
	//   - about 160 MiB for the writes the guard admits before it sees the
	//     disk fill (it rechecks every guardRefresh) and those in flight:
	//     ~50 requests at etcd's 1.5 MiB request limit, each written to the
	//     WAL and to bbolt.
	// Snapshot files add only kilobytes (since etcd 3.6 they hold the
	// membership), and etcd purges old WAL and snapshot files itself.
	DefaultMinFreeDiskBytes = 256 << 20

	// guardRefresh is how long one statfs result is used. A statfs costs
	// about 1.3 µs here (a write to etcd about 4 ms), so the guard could
	// check on every write; reusing a result for 100 ms bounds the cost on
	// any filesystem to ten calls a second whatever the write rate, and
	// what the server can write in 100 ms is inside the threshold's margin.
	guardRefresh = 100 * time.Millisecond
)

// etcd's WAL segment size decides both floors; it is a variable in etcd.
var (
	// MinMinFreeDiskBytes is the smallest guard threshold accepted
	// (Config.MinFreeDiskBytes, other than 0): below one WAL segment the
	// guard cannot keep etcd's next segment allocatable.
	MinMinFreeDiskBytes = wal.SegmentSizeBytes

	// etcdStartFloorBytes is the free space the embedded etcd needs to
	// start safely: a new WAL preallocates its first segment and, at
	// once, the next one. With less, etcd may start but crash at its first
	// segment cut, long after; the server refuses to start instead.
	etcdStartFloorBytes = 2 * wal.SegmentSizeBytes
)

// diskGuard refuses writes to the embedded etcd while the filesystem
// holding its data has less than minFree bytes free, so that etcd never meets
// a full disk: etcd treats a failed bbolt commit or WAL write as fatal and
// ends the whole process. The disk can be filled by anything, so the guard
// watches the filesystem's free space (statfs), not etcd's own size.
//
// It has no goroutine: writes ask check, which refreshes the free space
// at most every guardRefresh. Once tripped, it lets writes through again
// only at resumeFree bytes free (a quarter above minFree), so that etcd's own
// allocations right after resuming (a 64 MB WAL segment at the default)
// do not trip it straight back.
type diskGuard struct {
	// Immutable after newDiskGuard.
	dir        string // the embedded etcd's data directory
	minFree    uint64 // trip below this many free bytes
	resumeFree uint64 // recover at or above this many free bytes
	statfs     func(dir string) (free uint64, err error)
	log        *slog.Logger

	mu        sync.Mutex // guards the fields below; held across one statfs
	checkedAt time.Time  // when free was read; zero before the first read
	free      uint64     // free bytes at checkedAt
	low       bool       // writes are refused
	statErr   error      // the last statfs failure; logged when statfs starts failing
}

// newDiskGuard guards dir's filesystem with threshold minFree (> 0). statfs
// is freeBytes outside tests.
func newDiskGuard(dir string, minFree uint64, statfs func(string) (uint64, error), log *slog.Logger) *diskGuard {
	return &diskGuard{dir: dir, minFree: minFree, resumeFree: minFree + minFree/4, statfs: statfs, log: log}
}

// freeBytes is the space an unprivileged writer may still use on dir's
// filesystem. Blocks reserved for root are left out even when the server
// runs as root: they are the system's last reserve, not etcd's.
func freeBytes(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("statfs %s: %w", dir, err)
	}
	return st.Bavail * uint64(st.Bsize), nil
}

// check returns nil when a write may go to etcd, or the *spaceError that
// refuses it. A statfs failure keeps the previous state (the guard is a
// protection, not a reason to refuse writes on its own); it is logged
// when statfs starts failing.
func (g *diskGuard) check() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := time.Now()
	if g.checkedAt.IsZero() || now.Sub(g.checkedAt) >= guardRefresh {
		g.refreshLocked(now)
	}
	if g.low {
		return g.errorLocked()
	}
	return nil
}

// isLow reports whether writes are refused, rechecking as check does.
func (g *diskGuard) isLow() bool { return g.check() != nil }

// freeNow reads the free space now, bypassing the refresh interval; the
// NOSPACE recovery uses it before a defragmentation, which needs room for
// a copy of the database.
func (g *diskGuard) freeNow() (uint64, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.refreshLocked(time.Now())
	return g.free, g.statErr
}

// refreshLocked reads the free space and moves between accepting and
// refusing writes. g.mu must be held.
func (g *diskGuard) refreshLocked(now time.Time) {
	free, err := g.statfs(g.dir)
	g.checkedAt = now
	if err != nil {
		if g.statErr == nil {
			g.log.Warn("cannot read free disk space under the embedded etcd; the disk guard keeps its last state", "dir", g.dir, "error", err)
		}
		g.statErr = err
		return
	}
	g.statErr = nil
	g.free = free
	switch {
	case !g.low && free < g.minFree:
		g.low = true
		g.log.Warn("disk under the embedded etcd is nearly full: refusing writes until space is freed; reads keep working",
			"dir", g.dir, "freeBytes", free, "minFreeBytes", g.minFree, "resumeAtBytes", g.resumeFree)
	case g.low && free >= g.resumeFree:
		g.low = false
		g.log.Info("disk under the embedded etcd has space again: accepting writes", "dir", g.dir, "freeBytes", free)
	}
}

// errorLocked is the error a refused write gets. g.mu must be held.
func (g *diskGuard) errorLocked() *spaceError {
	return &spaceError{msg: fmt.Sprintf(
		"the disk holding the embedded etcd's data (%s) has %s free, less than the %s that --etcd-min-free-disk-bytes keeps free; "+
			"writes are refused until %s are free: free space on that disk (reads keep working)",
		g.dir, formatBytes(g.free), formatBytes(g.minFree), formatBytes(g.resumeFree))}
}

// formatBytes writes n in binary units, to one decimal.
func formatBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}
