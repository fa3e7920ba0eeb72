package snapshot

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Defaults of the server's scheduled snapshots, k3s's.
const (
	DefaultSchedule  = "0 */12 * * *"
	DefaultRetention = 5
)

// fileTime is the UTC time in a scheduled snapshot's name: sortable, and
// free of characters a file system or shell minds.
const fileTime = "20060102T150405Z"

// Schedule takes snapshots on a cron schedule into Dir and keeps the
// newest Retention of them.
type Schedule struct {
	// Spec is a standard five-field cron expression (robfig/cron's
	// ParseStandard: "0 */12 * * *", "@every 1h", "CRON_TZ=UTC 0 3 * * *").
	Spec string
	// Retention is how many of its snapshots to keep; at least 1.
	Retention int
	// Dir holds the snapshots; created (0700) if missing.
	Dir string
	// Node names this server in the files' names, so that servers sharing
	// Dir neither overwrite nor prune each other's snapshots.
	Node string
	// Save writes one snapshot to a path; Save of package snapshot with
	// the server's etcd.
	Save func(ctx context.Context, path string) (Info, error)
	Log  *slog.Logger
}

// ParseSpec checks a cron expression as Schedule reads it.
func ParseSpec(spec string) (cron.Schedule, error) {
	s, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, fmt.Errorf("cron expression %q: %w", spec, err)
	}
	return s, nil
}

// Run takes the scheduled snapshots until ctx ends. A failed snapshot is
// logged and leaves the older ones in place; the next is taken on
// schedule.
func (s *Schedule) Run(ctx context.Context) error {
	sched, err := ParseSpec(s.Spec)
	if err != nil {
		return err
	}
	if s.Retention < 1 {
		return fmt.Errorf("snapshot retention %d: must be at least 1", s.Retention)
	}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return err
	}
	for {
		now := time.Now()
		next := sched.Next(now)
		if next.IsZero() {
			return fmt.Errorf("cron expression %q never fires", s.Spec)
		}
		t := time.NewTimer(next.Sub(now))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		s.takeOne(ctx, next)
	}
}

// takeOne saves the snapshot due at due, then prunes.
func (s *Schedule) takeOne(ctx context.Context, due time.Time) {
	path := filepath.Join(s.Dir, s.fileName(due))
	start := time.Now()
	info, err := s.Save(ctx, path)
	if err != nil {
		if ctx.Err() == nil {
			s.Log.Error("scheduled etcd snapshot failed; older snapshots are kept", "file", path, "err", err)
		}
		return
	}
	s.Log.Info("scheduled etcd snapshot saved", "file", path, "revision", info.Revision, "bytes", info.Size, "took", time.Since(start).Round(time.Millisecond))
	removed, err := s.prune()
	for _, p := range removed {
		s.Log.Info("removed old etcd snapshot", "file", p, "retention", s.Retention)
	}
	if err != nil {
		s.Log.Warn("pruning old etcd snapshots", "dir", s.Dir, "err", err)
	}
}

// prefix starts the name of every snapshot this schedule takes.
func (s *Schedule) prefix() string { return "apiloom-etcd-snapshot-" + s.Node + "-" }

func (s *Schedule) fileName(t time.Time) string {
	return s.prefix() + t.UTC().Format(fileTime) + ".db"
}

// ours reports whether name is a snapshot this schedule took, and when.
// Only those are pruned: a snapshot the operator saved into Dir under
// another name, or another node's, is never deleted.
func (s *Schedule) ours(name string) (time.Time, bool) {
	rest, ok := strings.CutPrefix(name, s.prefix())
	if !ok {
		return time.Time{}, false
	}
	stamp, ok := strings.CutSuffix(rest, ".db")
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(fileTime, stamp)
	return t, err == nil
}

// prune deletes this schedule's snapshots but the newest Retention, and
// returns the paths it removed.
func (s *Schedule) prune() ([]string, error) {
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		return nil, err
	}
	type snap struct {
		name string
		at   time.Time
	}
	var snaps []snap
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if t, ok := s.ours(e.Name()); ok {
			snaps = append(snaps, snap{e.Name(), t})
		}
	}
	slices.SortFunc(snaps, func(a, b snap) int { return b.at.Compare(a.at) }) // newest first
	var removed []string
	var errs []error
	for _, old := range snaps[min(len(snaps), s.Retention):] {
		p := filepath.Join(s.Dir, old.name)
		if err := os.Remove(p); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, p)
	}
	if len(errs) > 0 {
		return removed, fmt.Errorf("%d not removed: %w", len(errs), errs[0])
	}
	return removed, nil
}
