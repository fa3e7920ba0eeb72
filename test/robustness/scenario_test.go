package robustness

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/apiloom/apiloom/generated/clientset/versioned"
	"github.com/apiloom/apiloom/test/robustness/cluster"
	"github.com/apiloom/apiloom/test/robustness/traffic"
)

// The shape of every scenario's traffic: 4 writers and 4 watchers over the
// two replicas, 20 shared names (so preconditions conflict now and then).
var trafficConfig = traffic.Config{
	Namespace: "robust",
	Names:     20,
	Writers:   4,
	Interval:  20 * time.Millisecond,
	OpTimeout: 5 * time.Second,
}

const (
	watchers = 4
	// faultHold is how long a fault lasts before the scenario repairs it.
	faultHold = 10 * time.Second
	// settle is how long traffic runs on the repaired cluster.
	settle = 10 * time.Second
	// minAcks is how many writes each phase must see acknowledged (by
	// every replica still up) before the next phase: the scenario's
	// proof that traffic flowed.
	minAcks = 50
)

// TestKillEtcdFollower: kill -9 an etcd follower under traffic, restart
// it on its data.
func TestKillEtcdFollower(t *testing.T) {
	runScenario(t, func(ctx context.Context, s *scenario) {
		f, err := s.c.Etcd.Follower(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("killing follower %s", f.Name)
		s.kill(ctx, f.Process)
		s.hold(ctx, 0, 1)
		s.restartEtcd(ctx, f)
	})
}

// TestKillEtcdLeader: kill -9 the etcd leader under traffic (the others
// elect a new one), restart it on its data.
func TestKillEtcdLeader(t *testing.T) {
	runScenario(t, func(ctx context.Context, s *scenario) {
		l, err := s.c.Etcd.Leader(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("killing leader %s", l.Name)
		s.kill(ctx, l.Process)
		s.hold(ctx, 0, 1)
		s.restartEtcd(ctx, l)
	})
}

// TestKillReplica: kill -9 one apiloom replica under traffic (the other
// serves on), restart it on its data directory.
func TestKillReplica(t *testing.T) {
	runScenario(t, func(ctx context.Context, s *scenario) {
		r := s.c.Replicas[1]
		t.Logf("killing %s", r.Name)
		s.kill(ctx, r.Process)
		s.hold(ctx, 0)
		if err := r.Start(); err != nil {
			t.Fatal(err)
		}
		if err := r.WaitReady(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// TestPauseReplica: SIGSTOP one apiloom replica under traffic (its
// connections stay open but nothing answers: its clients time out), then
// SIGCONT it.
func TestPauseReplica(t *testing.T) {
	runScenario(t, func(ctx context.Context, s *scenario) {
		r := s.c.Replicas[1]
		t.Logf("pausing %s", r.Name)
		if err := r.Pause(); err != nil {
			t.Fatal(err)
		}
		s.hold(ctx, 0)
		if err := r.Resume(); err != nil {
			t.Fatal(err)
		}
		if err := r.WaitReady(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// scenario is one running scenario: the cluster, its traffic's record and
// its resource sampling.
type scenario struct {
	t   *testing.T
	c   *cluster.Cluster
	rec *traffic.Recorder
	// fault is the fault window (faultStart, faultEnd); set by the
	// scenario's goroutine, read after fault returns.
	fault   faultWindow
	clients []versioned.Interface
	res     *sampling
	live    *traffic.LiveHistory // nil unless scenarioOptions.liveHistory
}

func (s *scenario) kill(ctx context.Context, p *cluster.Process) {
	s.faultStart()
	if err := p.Kill(ctx); err != nil {
		s.t.Fatal(err)
	}
}

// hold keeps the fault for faultHold, and until the given replicas have
// acknowledged minAcks writes since it began.
func (s *scenario) hold(ctx context.Context, replicas ...int) {
	s.t.Helper()
	since := time.Now()
	s.faultStart() // a no-op when kill marked it
	s.waitAcks(ctx, since, replicas...)
	timer := time.NewTimer(time.Until(since.Add(faultHold)))
	defer timer.Stop()
	select {
	case <-ctx.Done():
	case <-timer.C:
	}
}

func (s *scenario) restartEtcd(ctx context.Context, m *cluster.EtcdMember) {
	s.t.Helper()
	if err := m.Start(); err != nil {
		s.t.Fatal(err)
	}
	if err := s.c.Etcd.WaitHealthy(ctx); err != nil {
		s.t.Fatal(err)
	}
	s.faultEnd()
}

// waitAcks waits until each given replica has acknowledged minAcks writes
// that returned after since.
func (s *scenario) waitAcks(ctx context.Context, since time.Time, replicas ...int) {
	s.t.Helper()
	err := cluster.Until(ctx, "writes acknowledged", func(context.Context) (bool, error) {
		n := map[int]int{}
		for _, op := range s.rec.Ops() {
			if op.Outcome == traffic.Acknowledged && op.Return.After(since) {
				n[op.Replica]++
			}
		}
		for _, r := range replicas {
			if n[r] < minAcks {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		s.t.Fatal(err)
	}
}

// runScenario starts the cluster and traffic, runs fault (which injects
// and repairs the fault), lets traffic settle on the repaired cluster,
// then checks the record against etcd and prints the figures.
func runScenario(t *testing.T, fault func(context.Context, *scenario)) {
	runScenarioWith(t, scenarioOptions{}, fault)
}

// runScenarioWith is runScenario on a cluster set up as o says.
func runScenarioWith(t *testing.T, o scenarioOptions, fault func(context.Context, *scenario)) {
	if os.Getenv("APILOOM_ROBUSTNESS") != "1" {
		t.Skip("starts an etcd cluster and apiloom replicas as processes: set APILOOM_ROBUSTNESS=1 (make robustness)")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	c := cluster.Start(t, o.cluster...)
	clients := trafficClients(ctx, t, c)

	s := &scenario{t: t, c: c, rec: &traffic.Recorder{}, clients: clients, res: startSampling(ctx, t, c, clients, o)}
	s.live = startLiveHistory(ctx, t, c, o)
	start := time.Now()
	writersCtx, stopWriters := context.WithCancel(ctx)
	watchersCtx, stopWatchers := context.WithCancel(ctx)
	watches := traffic.NewWatches(watchers, len(clients))
	informers := traffic.StartInformers(trafficConfig, clients)
	var writersDone, watchersDone sync.WaitGroup
	writersDone.Add(2)
	watchersDone.Add(1)
	go func() { defer writersDone.Done(); traffic.RunWriters(writersCtx, trafficConfig, clients, s.rec) }()
	go func() { defer writersDone.Done(); traffic.RunReaders(writersCtx, trafficConfig, clients, s.rec) }()
	go func() { defer watchersDone.Done(); traffic.RunWatchers(watchersCtx, trafficConfig, watches, clients) }()
	defer func() { // on t.Fatal too: no goroutine outlives the test
		stopWriters()
		stopWatchers()
		writersDone.Wait()
		watchersDone.Wait()
		informers.Stop()
	}()

	s.waitAcks(ctx, start, 0, 1)
	faultCalled := time.Now()
	fault(ctx, s)
	if s.fault.from.IsZero() {
		// A scenario that marks nothing (a defragmentation, a churn of
		// watches): its fault lasts as long as its fault function.
		s.fault.from = faultCalled
	}
	s.faultEnd() // a no-op when the scenario's repair marked it
	repaired := time.Now()
	s.waitAcks(ctx, repaired, 0, 1)
	timer := time.NewTimer(time.Until(repaired.Add(settle)))
	select {
	case <-ctx.Done():
	case <-timer.C:
	}
	timer.Stop()
	stopWriters()
	writersDone.Wait()
	elapsed := time.Since(start)

	etcd, err := c.Etcd.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer etcd.Close()
	hist, err := s.history(ctx, etcd)
	if err != nil {
		t.Fatal(err)
	}
	if err := waitWatchersAtLast(ctx, watches, hist); err != nil {
		t.Error(err)
	}
	stopWatchers()
	watchersDone.Wait()
	if len(hist) > 0 {
		ictx, cancel := context.WithTimeout(ctx, informerCatchUp)
		if err := informers.WaitFor(ictx, hist[len(hist)-1].Revision); err != nil {
			t.Error(err)
		}
		cancel()
	}
	states := informers.States()
	informers.Stop()
	s.res.checkBack(ctx, t, "after the traffic")
	s.check(start, elapsed, hist, watches, states)
}

// opNames lists the writers' ids of the history's operations n (1-based).
func opNames(ids []string, ops map[int]bool) string {
	var out []string
	for _, n := range slices.Sorted(maps.Keys(ops)) {
		if n >= 1 && n <= len(ids) {
			out = append(out, fmt.Sprintf("%d=%s", n, ids[n-1]))
		}
	}
	return strings.Join(out, " ")
}

// waitWatchersAtLast waits until every watcher has seen etcd's last change
// in hist: a stuck watch fails here rather than passing the stream check
// with a short stream.
func waitWatchersAtLast(ctx context.Context, watches []*traffic.Watch, hist []traffic.Change) error {
	if len(hist) == 0 {
		return nil
	}
	last := hist[len(hist)-1].Revision
	return cluster.Until(ctx, "every watcher at the last change", func(context.Context) (bool, error) {
		for i, w := range watches {
			if w.LastRV() < last {
				return false, fmt.Errorf("watcher %d at %d, etcd's last change at %d", i, w.LastRV(), last)
			}
		}
		return true, nil
	})
}

// trafficClients makes one clientset per replica for the traffic, and the
// traffic's namespace.
func trafficClients(ctx context.Context, t *testing.T, c *cluster.Cluster) []versioned.Interface {
	t.Helper()
	var clients []versioned.Interface
	for i, r := range c.Replicas {
		cfg, err := r.Config()
		if err != nil {
			t.Fatal(err)
		}
		// No cfg.Timeout: it would cut watches too; each request has a
		// context deadline of trafficConfig.OpTimeout instead.
		cfg.QPS, cfg.Burst = 1000, 1000
		if i == 0 {
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: trafficConfig.Namespace}}
			if _, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		clients = append(clients, versioned.NewForConfigOrDie(cfg))
	}
	return clients
}
