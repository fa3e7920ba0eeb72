package robustness

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/generated/clientset/versioned"
	"github.com/apiloom/apiloom/test/robustness/check"
	"github.com/apiloom/apiloom/test/robustness/cluster"
	"github.com/apiloom/apiloom/test/robustness/history"
	"github.com/apiloom/apiloom/test/robustness/traffic"
)

// plantedReplica is the replica that runs the failpoints build with one
// failpoint armed; replica 0 runs the same build with none armed.
const plantedReplica = 1

// plantedAfterFire is how long traffic goes on once the planted bug has
// fired: time for its consequences (a later read, a watcher's next events)
// to reach the record.
const plantedAfterFire = 5 * time.Second

// plantedRun is what one planted-bug run recorded and what the checkers
// made of it.
type plantedRun struct {
	// fired is the failpoint's "failpoint NAME fired: ..." log line.
	fired string
	// h is the checkers' history: the writers' operations (ids as in
	// ids), the readers' gets and lists, then the reader's gets.
	h   history.History
	ids []string
	// reports are check.All's, by checker.
	reports map[string]check.Report
}

// plantedOptions shape a run.
type plantedOptions struct {
	// failpoint arms one failpoint on plantedReplica: "name=N".
	failpoint string
	// writersOnReplica0 sends every write to replica 0, so that the
	// planted replica serves only watches and the reader's gets.
	writersOnReplica0 bool
	// reader runs one client doing consistent gets on plantedReplica and
	// records them in the history.
	reader bool
	// informers runs the suite's informers, one per replica, checked by
	// Converged. Off for watchDropEvent: it fires on the Nth event due to
	// any watcher, and an informer whose dropped event is healed by the
	// key's next change is no failure any checker could see.
	informers bool
}

// failpointsBin returns $APILOOM_FAILPOINTS_BIN, or builds cmd/apiloom with
// the apiloom_failpoints tag into dir.
func failpointsBin(ctx context.Context, t *testing.T, dir string) string {
	if bin := os.Getenv("APILOOM_FAILPOINTS_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(dir, "apiloom-failpoints")
	// go test runs in test/robustness: the repository's root is ../..
	cmd := exec.CommandContext(ctx, "go", "build", "-C", "../..", "-tags", "apiloom_failpoints", "-o", bin, "./cmd/apiloom")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags apiloom_failpoints ./cmd/apiloom: %v\n%s", err, out)
	}
	return bin
}

// runPlanted starts the suite's cluster with both replicas on the
// failpoints build, restarts plantedReplica with opts.failpoint armed,
// runs the suite's traffic until the failpoint has fired and
// plantedAfterFire more, and checks the record against etcd's history.
func runPlanted(t *testing.T, opts plantedOptions) *plantedRun {
	if os.Getenv("APILOOM_ROBUSTNESS") != "1" {
		t.Skip("starts an etcd cluster and apiloom replicas as processes: set APILOOM_ROBUSTNESS=1 (make robustness)")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	bin := failpointsBin(ctx, t, t.TempDir())
	t.Setenv("APILOOM_BIN", bin) // cluster.Start runs both replicas on it
	c := cluster.Start(t)
	planted := c.Replicas[plantedReplica]
	if err := planted.RestartWith(ctx, bin, "APILOOM_FAILPOINTS="+opts.failpoint); err != nil {
		t.Fatal(err)
	}
	clients := trafficClients(ctx, t, c)
	writerClients := clients
	if opts.writersOnReplica0 {
		writerClients = clients[:1]
	}

	rec := &traffic.Recorder{}
	rd := &reader{client: clients[plantedReplica]}
	writersCtx, stopWriters := context.WithCancel(ctx)
	watchersCtx, stopWatchers := context.WithCancel(ctx)
	watches := traffic.NewWatches(watchers, len(clients))
	var writersDone, watchersDone sync.WaitGroup
	var informers *traffic.Informers
	if opts.informers {
		informers = traffic.StartInformers(trafficConfig, clients)
	}
	writersDone.Go(func() { traffic.RunWriters(writersCtx, trafficConfig, writerClients, rec) })
	// The suite's readers: a consistent get and a consistent list in turn,
	// on each replica.
	writersDone.Go(func() { traffic.RunReaders(writersCtx, trafficConfig, clients, rec) })
	if opts.reader {
		writersDone.Go(func() { rd.run(writersCtx) })
	}
	watchersDone.Go(func() { traffic.RunWatchers(watchersCtx, trafficConfig, watches, clients) })
	defer func() { // on t.Fatal too: no goroutine outlives the test
		stopWriters()
		stopWatchers()
		writersDone.Wait()
		watchersDone.Wait()
		if informers != nil {
			informers.Stop()
		}
	}()

	run := &plantedRun{}
	firedRE := regexp.MustCompile(`(?m)^failpoint \S+ fired: .*$`)
	err := cluster.Until(ctx, "failpoint "+opts.failpoint+" fired", func(context.Context) (bool, error) {
		log, err := planted.Log()
		run.fired = firedRE.FindString(log)
		return run.fired != "", err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("replica %d: %s", plantedReplica, run.fired)
	timer := time.NewTimer(plantedAfterFire)
	select {
	case <-ctx.Done():
	case <-timer.C:
	}
	timer.Stop()
	stopWriters()
	writersDone.Wait()

	etcd, err := c.Etcd.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer etcd.Close()
	hist, err := traffic.ReadHistory(ctx, etcd, trafficPrefix)
	if err != nil {
		t.Fatal(err)
	}
	if err := waitWatchersAtLast(ctx, watches, hist); err != nil {
		t.Fatal(err)
	}
	stopWatchers()
	watchersDone.Wait()
	var states []history.InformerState
	if informers != nil {
		if len(hist) > 0 {
			ictx, cancel := context.WithTimeout(ctx, informerCatchUp)
			err := informers.WaitFor(ictx, hist[len(hist)-1].Revision)
			cancel()
			if err != nil {
				t.Fatal(err)
			}
		}
		states = informers.States()
		informers.Stop()
	}

	ops, reads := rec.Ops(), rec.Reads()
	var e check.Etcd
	run.h, e, run.ids = traffic.ForCheckers(ops, reads, hist, watches, states)
	run.ids = append(run.ids, rd.appendTo(&run.h, append(ops, reads...))...)
	run.reports = map[string]check.Report{}
	for _, r := range check.All(run.h, e, time.Minute) {
		run.reports[r.Checker] = r
		t.Logf("%s", r.String())
	}
	t.Logf("PLANTED %s: writes %d, reads %d, reader gets %d, etcd changes %d, watch streams %d, informers %d",
		opts.failpoint, len(ops), len(reads), len(rd.ops), len(hist), len(run.h.Streams), len(states))
	return run
}

// reader does consistent gets of the writers' names on one replica, one
// every 10 ms, and records those that were answered.
type reader struct {
	client versioned.Interface
	mu     sync.Mutex // guards ops
	ops    []readOp
}

type readOp struct {
	name      string
	call, ret time.Time
	found     bool
	value     string
	rv        int64
}

func (r *reader) run(ctx context.Context) {
	rng := rand.New(rand.NewPCG(1, 17))
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	dbs := r.client.ExampleV1().Databases(trafficConfig.Namespace)
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		name := fmt.Sprintf("db-%d", rng.IntN(trafficConfig.Names))
		gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), trafficConfig.OpTimeout)
		op := readOp{name: name, call: time.Now()}
		obj, err := dbs.Get(gctx, name, metav1.GetOptions{}) // resourceVersion "": a consistent read
		op.ret = time.Now()
		cancel()
		switch {
		case err == nil:
			op.found, op.value = true, obj.Annotations[traffic.OpIDAnnotation]
			fmt.Sscan(obj.ResourceVersion, &op.rv)
		case apierrors.IsNotFound(err):
		default:
			continue // a read that failed says nothing; Linearizable leaves it out
		}
		r.mu.Lock()
		r.ops = append(r.ops, op)
		r.mu.Unlock()
	}
}

// appendTo adds the reader's gets to h, after the writers' operations,
// with times on ForCheckers' clock (from the writers' first call), and
// returns their names for reports ("r-N").
func (r *reader) appendTo(h *history.History, writes []traffic.Op) (ids []string) {
	var start time.Time
	for i, op := range writes {
		if i == 0 || op.Call.Before(start) {
			start = op.Call
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, op := range r.ops {
		h.Operations = append(h.Operations, history.Operation{
			ID: len(h.Operations) + 1, Client: 2000,
			Request: history.Request{Kind: history.Get, Key: op.name, ReadRV: "", Replica: plantedReplica},
			Call:    op.call.Sub(start), Return: op.ret.Sub(start),
			Outcome: history.Acknowledged,
			Response: history.Response{
				RV: op.rv, Found: op.found, Read: op.value,
			},
		})
		ids = append(ids, fmt.Sprintf("r-%d", len(ids)+1))
	}
	return ids
}
