package controllers

import (
	"context"
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// runElected runs list while this replica holds e's Lease, competing
// again after a loss, until ctx ends.
//
// Stopping is ordered so that a clean stop logs nothing alarming and no
// other replica runs the controllers while these still do: when ctx ends,
// the controllers stop first; only then does the elector stop and release
// the Lease (ReleaseOnCancel), and runElected returns after that. The
// elector's own context therefore outlives ctx; the server keeps serving
// until runElected returns, so the release, a request to the server
// itself, is answered.
func runElected(ctx context.Context, env *Env, e Election, list []Controller) error {
	client, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		return fmt.Errorf("controllers: %w", err)
	}
	host, _ := os.Hostname()
	id := host + "_" + string(uuid.NewUUID())
	lock := &finishingLock{Interface: &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: e.Namespace, Name: e.Name},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: id},
	}, timeout: e.RenewDeadline}
	for ctx.Err() == nil {
		cfg := leaderelection.LeaderElectionConfig{
			Lock: lock, ReleaseOnCancel: true, Name: e.Name,
			LeaseDuration: e.LeaseDuration, RenewDeadline: e.RenewDeadline, RetryPeriod: e.RetryPeriod,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStoppedLeading: func() { env.Log.Info("controllers: not leading", "identity", id) },
			},
		}
		if err := term(ctx, env, cfg, id, list); err != nil {
			return err
		}
	}
	return nil
}

// term is one run of the elector: it competes for the Lease until ctx
// ends and, once elected, runs list in this goroutine until ctx ends or
// the Lease is lost. It returns after the controllers have stopped and the
// elector has returned (having released the Lease if it held it).
func term(ctx context.Context, env *Env, cfg leaderelection.LeaderElectionConfig, id string, list []Controller) error {
	electionCtx, stopElection := context.WithCancel(context.WithoutCancel(ctx))
	defer stopElection()
	// The elector sends the term's context once, when elected; the
	// controllers run here, not in the elector's callback goroutine, so
	// that the Lease is released only after they have stopped.
	elected := make(chan context.Context, 1)
	cfg.Callbacks.OnStartedLeading = func(lctx context.Context) { elected <- lctx }
	le, err := leaderelection.NewLeaderElector(cfg)
	if err != nil {
		return fmt.Errorf("controllers: %w", err)
	}
	done := make(chan struct{})
	go func() { defer close(done); le.Run(electionCtx) }()

	select {
	case lctx := <-elected:
		env.Log.Info("controllers: leading", "identity", id)
		runCtx, cancel := context.WithCancel(ctx)
		stop := context.AfterFunc(lctx, cancel) // the Lease is lost
		runAll(runCtx, env, list)
		stop()
		cancel()
	case <-ctx.Done():
	case <-done: // only after electionCtx ends; kept so that term never blocks
	}
	stopElection()
	<-done
	return nil
}

// finishingLock lets a Lease request that has started finish when the
// elector's context ends, within its own deadline (or timeout when the
// elector set none). Cancelling one would gain nothing, since the elector
// stops after it anyway, and client-go logs every failed read of the
// Lease as an error; the release that follows uses a context of its own.
type finishingLock struct {
	resourcelock.Interface
	timeout time.Duration
}

var _ resourcelock.Interface = (*finishingLock)(nil)

func (l *finishingLock) detach(ctx context.Context) (context.Context, context.CancelFunc) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(l.timeout)
	}
	return context.WithDeadline(context.WithoutCancel(ctx), deadline)
}

func (l *finishingLock) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	ctx, cancel := l.detach(ctx)
	defer cancel()
	return l.Interface.Get(ctx)
}

func (l *finishingLock) Create(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	ctx, cancel := l.detach(ctx)
	defer cancel()
	return l.Interface.Create(ctx, ler)
}

func (l *finishingLock) Update(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	ctx, cancel := l.detach(ctx)
	defer cancel()
	return l.Interface.Update(ctx, ler)
}
