package controllers_test

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/utils/ptr"

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

// leaseWatcher is a controller that, when told to stop, reads who holds
// the Lease before it returns.
type leaseWatcher struct {
	leases  coordinationv1client.LeaseInterface
	name    string
	started chan struct{}
	// holderAtStop is the Lease's holder as the controller stopped.
	holderAtStop string
}

func (w *leaseWatcher) Name() string { return "lease-watcher" }

func (w *leaseWatcher) Run(ctx context.Context, _ *controllers.Env) error {
	close(w.started)
	<-ctx.Done()
	l, err := w.leases.Get(context.WithoutCancel(ctx), w.name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	w.holderAtStop = ptr.Deref(l.Spec.HolderIdentity, "")
	return nil
}

// TestElectionStopOrder: when Run's context ends, the controllers stop
// while this replica still holds the Lease, and Run returns only after the
// Lease has been released (no holder), so a server that closes its
// listener once Run returns has nothing of the election left running.
func TestElectionStopOrder(t *testing.T) {
	ts := testserver.Start(t, apiserver.Install, testserver.WithElection(false))
	env := &controllers.Env{Config: ts.Config, Log: slog.New(slog.DiscardHandler)}
	e := controllers.DefaultElection()
	e.Name = "test-stop-order"
	leases := kubernetes.NewForConfigOrDie(ts.Config).CoordinationV1().Leases(e.Namespace)
	w := &leaseWatcher{leases: leases, name: e.Name, started: make(chan struct{})}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	returned := make(chan error, 1)
	go func() { returned <- controllers.Run(ctx, env, e, w) }()
	select {
	case <-w.started:
	case <-time.After(30 * time.Second):
		t.Fatal("the controller did not start within 30s")
	}
	l, err := leases.Get(t.Context(), e.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	leader := ptr.Deref(l.Spec.HolderIdentity, "")
	if leader == "" {
		t.Fatal("the controller runs, but the Lease names no holder")
	}

	cancel()
	select {
	case err := <-returned:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return within 30s of its context ending")
	}
	if w.holderAtStop != leader {
		t.Errorf("as the controller stopped, the Lease was held by %q, want %q (still this replica)", w.holderAtStop, leader)
	}
	l, err = leases.Get(t.Context(), e.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h := ptr.Deref(l.Spec.HolderIdentity, ""); h != "" {
		t.Errorf("after Run returned, the Lease is held by %q, want released (no holder)", h)
	}
}
