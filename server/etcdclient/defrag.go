package etcdclient

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"
)

const (
	// DefaultDefragReclaimableBytes and DefaultDefragReclaimablePercent
	// decide when the embedded etcd is defragmented after a compaction:
	// once its file holds at least this many bytes of free pages, and
	// these make at least this share of the file. They are MicroShift's
	// defaults for its single-node etcd (100 MiB, 45%; OpenShift's etcd
	// operator uses the same pair).
	//
	// Why both: bbolt reuses free pages, so under steady churn the file
	// settles at what is in use plus about one compaction interval of
	// history, and defragmenting would only make it grow back. Free space
	// stays large only after many objects were deleted for good (or after
	// a burst of history), and that is when giving it back pays. The
	// share keeps a large database from being copied for a few percent;
	// the floor keeps a small one from being copied for a few megabytes.
	// A defragmentation blocks etcd's writes while it copies what is in
	// use (2.3 to 2.9 s for 141 MiB on a loaded 2-core machine; the watch
	// cache keeps serving lists and watches) and needs that much free disk.
	DefaultDefragReclaimableBytes   = 100 << 20
	DefaultDefragReclaimablePercent = 45
)

// defragRule says when a database file holds enough free pages to be
// worth defragmenting. percent 0 switches it off.
type defragRule struct {
	minBytes int64 // free bytes at least
	percent  int64 // free share of the file at least, in percent
}

// due reports whether a file of size bytes, inUse of them in use, should
// be defragmented.
func (r defragRule) due(size, inUse int64) bool {
	if r.percent <= 0 || size <= 0 {
		return false
	}
	free := size - inUse
	return free >= r.minBytes && free*100 >= r.percent*size
}

// Outcomes of a look after a compaction; the label of
// apiloom_etcd_defrag_checks_total.
const (
	defragDone           = "defragmented"
	defragNotNeeded      = "not_needed"
	defragWaitingForDisk = "waiting_for_disk" // the disk guard refuses writes, or no room for the copy
	defragError          = "error"
)

// compactionDefrag gives the embedded etcd's free pages back to the disk
// after a compaction, when defragRule says it pays. Compaction frees pages
// inside etcd's file but never shrinks it; without this the file keeps the
// size of its largest moment for good (etcd's maintenance guide: "the
// space ... is only reclaimed by defragmentation").
//
// It runs in the goroutine of quotaRecovery.Run, so that it and the
// NOSPACE recovery never defragment at once. It learns of compactions
// through compactionKV. Like the recovery, it does nothing while the disk
// guard refuses writes: defragmenting writes a copy of the database.
type compactionDefrag struct {
	// Immutable after newCompactionDefrag.
	maint     clientv3.Maintenance
	endpoint  string
	guard     *diskGuard // nil without a disk guard
	rule      defragRule
	log       *slog.Logger
	compacted chan struct{} // buffered (1): a compaction ended; notify sends, Run receives
	checks    *prometheus.CounterVec
	reclaimed prometheus.Counter
}

func newCompactionDefrag(maint clientv3.Maintenance, endpoint string, guard *diskGuard, rule defragRule, log *slog.Logger, metrics prometheus.Registerer) *compactionDefrag {
	checks := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiloom_etcd_defrag_checks_total",
		Help: "Looks at the embedded etcd's free pages after a compaction, by outcome: defragmented, not_needed, waiting_for_disk, error.",
	}, []string{"outcome"})
	reclaimed := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "apiloom_etcd_defrag_reclaimed_bytes_total",
		Help: "Bytes by which defragmentations after compactions shrank the embedded etcd's database file.",
	})
	if metrics != nil {
		metrics.MustRegister(checks, reclaimed)
	}
	return &compactionDefrag{maint: maint, endpoint: endpoint, guard: guard, rule: rule, log: log,
		compacted: make(chan struct{}, 1), checks: checks, reclaimed: reclaimed}
}

// notify says a compaction ended. It never blocks; compactions that end
// while a look is pending make one look.
func (d *compactionDefrag) notify() {
	select {
	case d.compacted <- struct{}{}:
	default:
	}
}

// check is one look after a compaction; it returns its outcome.
func (d *compactionDefrag) check(ctx context.Context) (string, error) {
	outcome, err := d.look(ctx)
	d.checks.WithLabelValues(outcome).Inc()
	return outcome, err
}

func (d *compactionDefrag) look(ctx context.Context) (string, error) {
	if d.guard != nil && d.guard.isLow() {
		return defragWaitingForDisk, nil
	}
	st, err := d.maint.Status(ctx, d.endpoint)
	if err != nil {
		return defragError, fmt.Errorf("status: %w", err)
	}
	if !d.rule.due(st.DbSize, st.DbSizeInUse) {
		return defragNotNeeded, nil
	}
	// The copy holds what is in use; the guard's reserve stays free.
	if d.guard != nil {
		if free, err := d.guard.freeNow(); err == nil && free < uint64(st.DbSizeInUse)+d.guard.minFree {
			return defragWaitingForDisk, nil
		}
	}
	start := time.Now()
	if _, err := d.maint.Defragment(ctx, d.endpoint); err != nil {
		return defragError, fmt.Errorf("defragment: %w", err)
	}
	took := time.Since(start)
	after, err := d.maint.Status(ctx, d.endpoint)
	if err != nil {
		return defragError, fmt.Errorf("status: %w", err)
	}
	if shrunk := st.DbSize - after.DbSize; shrunk > 0 {
		d.reclaimed.Add(float64(shrunk))
	}
	d.log.Info("defragmented the embedded etcd after a compaction: its file held mostly free pages",
		"beforeBytes", st.DbSize, "inUseBytes", st.DbSizeInUse, "afterBytes", after.DbSize, "took", took)
	return defragDone, nil
}

// compactionKV tells compactionDefrag of each compaction of the embedded
// etcd, once etcd has removed the compacted revisions from its database:
// it makes every compaction physical (clientv3.WithCompactPhysical), so
// that Compact returns only then. Before that, etcd's in-use size does not
// show the pages the compaction frees (etcd deletes them in batches of a
// thousand keys, 10 ms apart: tens of seconds at a million objects). The
// compactor waits for it in its own goroutine; nothing else compacts
// through it.
type compactionKV struct {
	clientv3.KV
	onCompacted func()
}

func (k compactionKV) Compact(ctx context.Context, rev int64, opts ...clientv3.CompactOption) (*clientv3.CompactResponse, error) {
	resp, err := k.KV.Compact(ctx, rev, slices.Concat(opts, []clientv3.CompactOption{clientv3.WithCompactPhysical()})...)
	if err == nil {
		k.onCompacted()
	}
	return resp, err
}
