package etcdclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// DefaultEmbeddedQuotaBytes is the embedded etcd's space quota when
// none is given (8 GiB; an external etcd keeps its own, 2 GiB by default).
// etcd's quota counts its file, free pages included. An object of about
// 1.5 KiB takes about 2,050 bytes of it (measured, BenchmarkEmbeddedEtcdChurn),
// so etcd's 2 GiB holds about a million objects with no history and no
// free pages, and fails a user shortly after: one round of updates to all
// of them doubles the file until a defragmentation. 8 GiB, the most etcd
// suggests (it warns above it) and MicroShift's default for its
// single-node etcd, holds a million objects with room for their history
// and free pages. A quota is a ceiling, not an allocation: the file grows
// only as data does, and on a disk too small for it the disk guard
// refuses writes (507) before the disk fills.
const DefaultEmbeddedQuotaBytes = 8 << 30

// quotaRecoveryInterval is how often the recovery looks again while the
// NOSPACE alarm is raised. Each look is an alarm list and a status call
// (and a compaction when deletes moved the revision), all cheap.
const quotaRecoveryInterval = 5 * time.Second

// quotaRecovery does for the embedded etcd what etcd's maintenance guide
// ("Space quota") asks an operator to do once its NOSPACE alarm is raised:
// compact away old revisions, defragment, and disarm the alarm once the
// database fits again, with a tenth of the quota free so that the next
// write does not raise the alarm at once. It does nothing while the disk
// guard refuses writes: compaction and defragmentation write too, and
// defragmentation needs room for a copy of the database. An external etcd
// is left to its operator.
//
// It runs only while there is something to do: once at start (an alarm
// survives restarts), then whenever etcd answers a write with NOSPACE,
// retrying every interval until the alarm is disarmed.
type quotaRecovery struct {
	// Immutable after newQuotaRecovery.
	kv       clientv3.KV // unguarded: etcd allows compaction under the alarm
	maint    clientv3.Maintenance
	endpoint string
	quota    int64      // the quota etcd enforces, in bytes
	guard    *diskGuard // nil without a disk guard
	log      *slog.Logger
	interval time.Duration
	wake     chan struct{} // buffered (1): NOSPACE seen; notify sends, Run receives
	steps    *prometheus.CounterVec
	defrag   *compactionDefrag // nil: no defragmentation after compactions

	// Owned by the goroutine calling Run (or step, in tests).
	attempted int64 // revision of the last compaction and defragmentation
	waiting   bool  // "still over the quota" was logged
}

// Outcomes of a recovery step that found the NOSPACE alarm raised; the
// label of apiloom_etcd_nospace_recovery_steps_total.
const (
	outcomeDisarmed       = "disarmed"         // the database fits again; alarm disarmed
	outcomeOverQuota      = "over_quota"       // compacted and defragmented, still too big
	outcomeUnchanged      = "unchanged"        // nothing deleted since the last attempt
	outcomeWaitingForDisk = "waiting_for_disk" // the disk guard refuses writes, or no room to defragment
	outcomeError          = "error"
)

func newQuotaRecovery(kv clientv3.KV, maint clientv3.Maintenance, endpoint string, quota int64, guard *diskGuard, log *slog.Logger, metrics prometheus.Registerer) *quotaRecovery {
	steps := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiloom_etcd_nospace_recovery_steps_total",
		Help: "Looks at the embedded etcd's raised NOSPACE alarm by outcome: disarmed, over_quota, unchanged (nothing deleted since), waiting_for_disk, error.",
	}, []string{"outcome"})
	if metrics != nil {
		metrics.MustRegister(steps)
	}
	return &quotaRecovery{kv: kv, maint: maint, endpoint: endpoint, quota: quota, guard: guard, log: log,
		interval: quotaRecoveryInterval, wake: make(chan struct{}, 1), steps: steps}
}

// notify wakes Run: etcd answered a write with NOSPACE. It never blocks.
func (r *quotaRecovery) notify() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Run recovers from NOSPACE alarms, and defragments after compactions
// when r.defrag is set, until ctx ends. One goroutine does both, so that
// two defragmentations never run at once.
func (r *quotaRecovery) Run(ctx context.Context) {
	active := true // an alarm raised before a restart is still raised
	var compacted <-chan struct{}
	if r.defrag != nil {
		compacted = r.defrag.compacted
	}
	for {
		if active {
			done, err := r.step(ctx)
			if err != nil && ctx.Err() == nil {
				r.log.Warn("recovering the embedded etcd from its NOSPACE alarm failed; retrying", "error", err)
			}
			active = !done
		}
		var retry <-chan time.Time // nil: wait for a wake-up only
		if active {
			retry = time.After(r.interval)
		}
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
			active = true
		case <-retry:
		case <-compacted:
			// Under the alarm the recovery compacts and defragments itself.
			if !active {
				if _, err := r.defrag.check(ctx); err != nil && ctx.Err() == nil {
					r.log.Warn("defragmenting the embedded etcd after a compaction failed; looking again after the next one", "error", err)
				}
			}
		}
	}
}

// step is one look: it returns done when no NOSPACE alarm is raised (any
// more), and false to be called again later.
func (r *quotaRecovery) step(ctx context.Context) (done bool, err error) {
	done, outcome, err := r.look(ctx)
	if outcome != "" {
		r.steps.WithLabelValues(outcome).Inc()
	}
	return done, err
}

// look is step without the counting: outcome is "" when no alarm is
// raised.
func (r *quotaRecovery) look(ctx context.Context) (done bool, outcome string, err error) {
	alarms, err := r.maint.AlarmList(ctx)
	if err != nil {
		return false, outcomeError, fmt.Errorf("list alarms: %w", err)
	}
	var alarm *pb.AlarmMember
	for _, a := range alarms.Alarms {
		if a.Alarm == pb.AlarmType_NOSPACE {
			alarm = a
			break
		}
	}
	if alarm == nil {
		r.waiting = false
		return true, "", nil
	}
	if r.guard != nil && r.guard.isLow() {
		return false, outcomeWaitingForDisk, nil // the disk guard's recovery comes first
	}

	// Under the alarm only deletes move the revision. Nothing deleted
	// since the last attempt: nothing new to gain.
	head, err := r.kv.Get(ctx, "/", clientv3.WithCountOnly())
	if err != nil {
		return false, outcomeError, fmt.Errorf("read revision: %w", err)
	}
	rev := head.Header.Revision
	if rev == r.attempted {
		return false, outcomeUnchanged, nil
	}
	st, err := r.maint.Status(ctx, r.endpoint)
	if err != nil {
		return false, outcomeError, fmt.Errorf("status: %w", err)
	}
	// Defragmenting writes a compact copy of the database, then replaces
	// the file: it needs up to the database's size beyond the guard's.
	if r.guard != nil {
		if free, err := r.guard.freeNow(); err == nil && free < uint64(st.DbSize)+r.guard.minFree {
			return false, outcomeWaitingForDisk, nil
		}
	}
	// Compacting up to now turns old revisions and deleted objects into
	// free pages; defragmenting gives them back, which is what etcd's quota
	// counts. etcd's in-use figure lags behind a compaction until its next
	// commit, which never comes while writes are refused, so only the
	// defragmented size tells whether the database fits. Both run once at
	// the alarm (churn alone can fill the quota with free pages) and then
	// once per interval while deletes go on.
	if _, err := r.kv.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil && !errors.Is(err, rpctypes.ErrCompacted) {
		return false, outcomeError, fmt.Errorf("compact to %d: %w", rev, err)
	}
	if _, err := r.maint.Defragment(ctx, r.endpoint); err != nil {
		return false, outcomeError, fmt.Errorf("defragment: %w", err)
	}
	r.attempted = rev
	if st, err = r.maint.Status(ctx, r.endpoint); err != nil {
		return false, outcomeError, fmt.Errorf("status: %w", err)
	}
	target := r.quota - r.quota/10
	if st.DbSize > target {
		if !r.waiting {
			r.log.Warn("the embedded etcd's database is over its space quota (NOSPACE): writes fail until objects are deleted",
				"sizeBytes", st.DbSize, "quotaBytes", r.quota, "disarmBelowBytes", target)
			r.waiting = true
		}
		return false, outcomeOverQuota, nil
	}
	if _, err := r.maint.AlarmDisarm(ctx, (*clientv3.AlarmMember)(&pb.AlarmMember{MemberID: alarm.MemberID, Alarm: pb.AlarmType_NOSPACE})); err != nil {
		return false, outcomeError, fmt.Errorf("disarm: %w", err)
	}
	r.log.Info("the embedded etcd's database fits its space quota again: compacted, defragmented and disarmed its NOSPACE alarm; writes work again",
		"sizeBytes", st.DbSize, "quotaBytes", r.quota)
	r.waiting = false
	return true, outcomeDisarmed, nil
}
