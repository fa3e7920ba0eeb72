package controllers_test

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apiloom/apiloom/generated/apiserver"
	"github.com/apiloom/apiloom/server/controllers"
	"github.com/apiloom/apiloom/server/testserver"
)

// recorder is a controller that counts how many of its runs are running.
type recorder struct {
	name    string
	running *atomic.Int32
	max     *atomic.Int32
	started chan string
}

func (r *recorder) Name() string { return r.name }

func (r *recorder) Run(ctx context.Context, _ *controllers.Env) error {
	n := r.running.Add(1)
	for m := r.max.Load(); n > m && !r.max.CompareAndSwap(m, n); m = r.max.Load() {
	}
	r.started <- r.name
	<-ctx.Done()
	r.running.Add(-1)
	return nil
}

// TestElectionOneReplicaRunsAtATime: two replicas compete for one Lease on
// the same server; only one runs its controllers, and when it stops (its
// context ends, releasing the Lease) the other takes over.
func TestElectionOneReplicaRunsAtATime(t *testing.T) {
	ts := testserver.Start(t, apiserver.Install, testserver.WithElection(false))
	env := &controllers.Env{Config: ts.Config, Log: slog.New(slog.DiscardHandler)}
	e := controllers.DefaultElection()
	e.Name = "test-election"
	e.LeaseDuration, e.RenewDeadline, e.RetryPeriod = 3*time.Second, 2*time.Second, 100*time.Millisecond

	var running, most atomic.Int32
	started := make(chan string, 4)
	ctxs := map[string]context.CancelFunc{}
	var wg sync.WaitGroup
	for _, name := range []string{"a", "b"} {
		ctx, cancel := context.WithCancel(t.Context())
		ctxs[name] = cancel
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := controllers.Run(ctx, env, e, &recorder{name: name, running: &running, max: &most, started: started}); err != nil {
				t.Errorf("run %s: %v", name, err)
			}
		}()
	}
	defer func() {
		for _, cancel := range ctxs {
			cancel()
		}
		wg.Wait()
	}()

	first := waitStarted(t, started)
	ctxs[first]()
	second := waitStarted(t, started)
	if second == first {
		t.Fatalf("replica %s ran again after it stopped", first)
	}
	if m := most.Load(); m != 1 {
		t.Errorf("%d replicas ran their controllers at once, want 1", m)
	}
}

func waitStarted(t *testing.T, started <-chan string) string {
	t.Helper()
	select {
	case name := <-started:
		return name
	case <-time.After(30 * time.Second):
		t.Fatal("no replica started its controllers within 30s")
		return ""
	}
}
