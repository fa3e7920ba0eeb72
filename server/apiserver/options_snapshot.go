package apiserver

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/apiloom/apiloom/server/snapshot"
)

// SnapshotOptions are the server's scheduled etcd snapshots, with k3s's
// flag names and defaults.
type SnapshotOptions struct {
	// Schedule is a five-field cron expression (--etcd-snapshot-schedule-cron).
	Schedule string
	// Retention is how many scheduled snapshots to keep.
	Retention int
	// Dir holds them; "" is DataDir/snapshots.
	Dir string
	// Disabled turns them off (true) or on (false); nil decides by the
	// etcd: on for the embedded one, off for --etcd-servers
	// (snapshotsEnabled says why).
	Disabled *bool
}

func defaultSnapshotOptions() SnapshotOptions {
	return SnapshotOptions{Schedule: snapshot.DefaultSchedule, Retention: snapshot.DefaultRetention}
}

func (o *Options) addSnapshotFlags(fs *pflag.FlagSet) {
	s := &o.Snapshots
	fs.StringVar(&s.Schedule, "etcd-snapshot-schedule-cron", s.Schedule, "when the server snapshots etcd, as a cron expression (minute hour day-of-month month day-of-week; @every 1h and CRON_TZ=UTC prefixes work too), in the server's local time")
	fs.IntVar(&s.Retention, "etcd-snapshot-retention", s.Retention, "how many scheduled snapshots to keep; older ones the schedule took are deleted, no other file")
	fs.StringVar(&s.Dir, "etcd-snapshot-dir", s.Dir, "directory for scheduled snapshots; default: --data-dir/snapshots")
	fs.Var(optionalBool{&s.Disabled}, "etcd-disable-snapshots", "disable scheduled etcd snapshots; default: enabled for the embedded etcd, disabled with --etcd-servers "+
		"(whose operator backs the cluster up; every replica would snapshot it): --etcd-disable-snapshots=false enables them there, on one replica")
	fs.Lookup("etcd-disable-snapshots").NoOptDefVal = "true"
}

func (o *Options) validateSnapshots() []error {
	if !o.snapshotsEnabled() {
		return nil
	}
	var errs []error
	if _, err := snapshot.ParseSpec(o.Snapshots.Schedule); err != nil {
		errs = append(errs, fmt.Errorf("--etcd-snapshot-schedule-cron: %w", err))
	}
	if o.Snapshots.Retention < 1 {
		errs = append(errs, errors.New("--etcd-snapshot-retention must be at least 1 (--etcd-disable-snapshots turns them off)"))
	}
	return errs
}

// snapshotsEnabled decides whether the server snapshots etcd on
// schedule. By default it does for the embedded etcd, whose data
// directory is otherwise the only copy (k3s does the same). It does not
// for an external etcd: that cluster has an operator of its own, who backs
// it up with etcd's tools, and every replica of apiloom sharing it would
// snapshot the same data. An operator who wants apiloom to do it anyway
// enables it on one replica.
func (o *Options) snapshotsEnabled() bool {
	if o.Snapshots.Disabled != nil {
		return !*o.Snapshots.Disabled
	}
	return len(o.EtcdServers) == 0
}

// snapshotDir is where scheduled snapshots go.
func (o *Options) snapshotDir() string {
	if o.Snapshots.Dir != "" {
		return o.Snapshots.Dir
	}
	return o.path("snapshots")
}

// optionalBool is a bool flag whose absence is told apart from false.
type optionalBool struct{ p **bool }

func (b optionalBool) String() string {
	if b.p == nil || *b.p == nil {
		return "auto"
	}
	return strconv.FormatBool(**b.p)
}

func (b optionalBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	*b.p = &v
	return nil
}

func (optionalBool) Type() string { return "bool" }
