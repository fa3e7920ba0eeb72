package cluster

import (
	"context"
	"os"
	"testing"
	"time"
)

func skipUnlessRobustness(t *testing.T) {
	if os.Getenv("APILOOM_ROBUSTNESS") != "1" {
		t.Skip("starts etcd and apiloom processes: set APILOOM_ROBUSTNESS=1 (make robustness)")
	}
}

// TestEtcdFaults drives the member faults the scenarios use on a bare
// cluster: a SIGSTOPped leader is replaced by another member, and a
// follower killed with SIGKILL rejoins on its data after a restart.
func TestEtcdFaults(t *testing.T) {
	skipUnlessRobustness(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	bins, err := FindBinaries(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	base, err := basePort()
	if err != nil {
		t.Fatal(err)
	}
	e, err := StartEtcd(ctx, bins.Etcd, dir, 3, base+10)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())

	leader, err := e.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := leader.Pause(); err != nil {
		t.Fatal(err)
	}
	err = Until(ctx, "a new leader", func(ctx context.Context) (bool, error) {
		l, err := e.Leader(ctx)
		return err == nil && l != leader, err
	})
	leader.Resume()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}

	f, err := e.Follower(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if f.Running() {
		t.Fatal("killed member still running")
	}
	if err := f.Start(); err != nil {
		t.Fatal(err)
	}
	if err := e.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
}
