package apiserver

import (
	"context"
	"os"
	"strings"
	"sync"

	"github.com/apiloom/apiloom/server/etcdclient"
	"github.com/apiloom/apiloom/server/snapshot"
)

// startSnapshots runs the scheduled etcd snapshots, if enabled, until ctx
// ends; background waits for them at shutdown, so none is left half
// written (Save's .part file is removed when its context ends).
func (s *Server) startSnapshots(ctx context.Context, etcd *etcdclient.Conn, background *sync.WaitGroup) {
	if !s.opts.snapshotsEnabled() {
		return
	}
	target := snapshotTarget(&s.opts, etcd.Endpoint())
	sched := &snapshot.Schedule{
		Spec: s.opts.Snapshots.Schedule, Retention: s.opts.Snapshots.Retention,
		Dir: s.opts.snapshotDir(), Node: nodeName(), Log: s.log,
		Save: func(ctx context.Context, path string) (snapshot.Info, error) { return snapshot.Save(ctx, target, path) },
	}
	s.log.Info("scheduled etcd snapshots", "cron", sched.Spec, "retention", sched.Retention, "dir", sched.Dir)
	background.Add(1)
	go func() {
		defer background.Done()
		if err := sched.Run(ctx); err != nil {
			s.log.Error("scheduled etcd snapshots stopped", "err", err)
		}
	}()
}

// snapshotTarget is the etcd the options name: the embedded one at
// endpoint, or the external cluster.
func snapshotTarget(o *Options, endpoint string) snapshot.Target {
	if len(o.EtcdServers) == 0 {
		return snapshot.Target{Endpoints: []string{endpoint}}
	}
	return snapshot.Target{Endpoints: o.EtcdServers, CAFile: o.EtcdCAFile, CertFile: o.EtcdCertFile, KeyFile: o.EtcdKeyFile}
}

// nodeName names this host in scheduled snapshots' file names, as k3s
// does, so that replicas writing into one directory keep apart.
func nodeName() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "apiloom"
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_':
			return r
		}
		return '-'
	}, h)
}
