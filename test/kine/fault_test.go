package kine

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	"github.com/apiloom/apiloom/generated/apiserver"
	"github.com/apiloom/apiloom/generated/clientset/versioned"
	"github.com/apiloom/apiloom/generated/informers/externalversions"
	apiloomserver "github.com/apiloom/apiloom/server/apiserver"
	"github.com/apiloom/apiloom/server/testserver"
)

// pgCtl stops or starts the test's PostgreSQL with hack/lib/postgres.sh,
// whose path make test-postgres passes in APILOOM_PG_LIB (with PG_DIR and
// PG_BIN, set by its pg_setup).
func pgCtl(t *testing.T, args ...string) {
	t.Helper()
	script := `source "$APILOOM_PG_LIB"; if [[ $(id -u) == 0 ]]; then pg_as=(runuser -u postgres --); fi; "$@"`
	out, err := exec.Command("bash", append([]string{"-c", script, "pg"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestDatabaseRestart stops PostgreSQL under kine while writers create and
// update objects through apiloom and watchers follow them, starts it again,
// and checks what issue 16 asks: while it is down writes fail with a
// Status (none hangs past the request timeout); afterwards every
// acknowledged write is in a consistent list, the watchers and an
// informer agree with that list, and the server serves again by itself.
// It runs twice: pg_ctl -m fast (clients disconnected, a clean shutdown)
// and -m immediate (a crash; PostgreSQL replays its WAL at start).
func TestDatabaseRestart(t *testing.T) {
	if os.Getenv("APILOOM_PG_LIB") == "" || os.Getenv("APILOOM_KINE_ENDPOINT") == "" {
		t.Skip("make test-postgres runs this: it stops and starts the PostgreSQL under kine")
	}
	// kine logs every query that fails while the database is down.
	level := logrus.GetLevel()
	logrus.SetLevel(logrus.FatalLevel)
	t.Cleanup(func() { logrus.SetLevel(level) })
	endpoints := kineEndpoints(t)
	const requestTimeout = 10 * time.Second
	ts := testserver.Start(t, apiserver.Install, testserver.WithEtcd(endpoints...), testserver.WithControllers(),
		func(o *apiloomserver.Options) { o.RequestTimeout = requestTimeout })
	cs := versioned.NewForConfigOrDie(ts.Config)
	for _, mode := range []string{"fast", "immediate"} {
		t.Run(mode, func(t *testing.T) { testDatabaseRestart(t, ts, cs, mode, requestTimeout) })
	}
}

func testDatabaseRestart(t *testing.T, ts *testserver.TestServer, cs versioned.Interface, mode string, requestTimeout time.Duration) {
	ns := fmt.Sprintf("restart-%s-%d", mode, time.Now().UnixMilli()) // the database may outlive one run
	ts.CreateNamespaces(t, ns)
	ctx, stop := context.WithCancel(t.Context())

	// Watchers: a raw watch and an informer, both from before the writes.
	var bg sync.WaitGroup
	raw := &rawWatcher{}
	bg.Go(func() { raw.run(ctx, cs, ns) })
	factory := externalversions.NewSharedInformerFactoryWithOptions(cs, 0, externalversions.WithNamespace(ns))
	informer := factory.Example().V1().Databases().Informer()
	factory.Start(ctx.Done())
	defer func() { stop(); factory.Shutdown(); bg.Wait() }()
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		t.Fatal("informer did not sync")
	}
	baseline := serverGoroutines()

	// Writers, each request bounded by a client deadline past the
	// server's request timeout, to see whether the server answers first.
	log := newWriteLog()
	wctx, stopWriters := context.WithCancel(ctx)
	var writers sync.WaitGroup
	for i := range 4 {
		writers.Go(func() { writer(wctx, cs, ns, fmt.Sprintf("w%d", i), requestTimeout+5*time.Second, log) })
	}
	waitFor(t, "acknowledged writes before the stop", 30*time.Second, func() bool {
		log.mu.Lock()
		defer log.mu.Unlock()
		return log.counts[acked] >= 40
	})

	// The outage, with /readyz probed throughout.
	ready := &readyzProbe{cfg: ts.Config}
	pctx, stopProbe := context.WithCancel(ctx)
	var probe sync.WaitGroup
	probe.Go(func() { ready.run(pctx) })
	stopped := time.Now()
	pgCtl(t, "pg_stop", mode)
	waitFor(t, "a failed write while the database is down", 30*time.Second, func() bool {
		log.mu.Lock()
		defer log.mu.Unlock()
		return !log.firstFail.IsZero()
	})
	for time.Since(stopped) < 10*time.Second { // the outage lasts 10s: that is the fault, not a wait
		time.Sleep(100 * time.Millisecond)
	}
	pgCtl(t, "pg_start")
	restarted := time.Now()
	log.markRestarted()
	waitFor(t, "a write acknowledged after the restart", 90*time.Second, func() bool {
		log.mu.Lock()
		defer log.mu.Unlock()
		return !log.firstOKAfter.IsZero()
	})
	waitFor(t, "/readyz ok after the restart", 60*time.Second, func() bool { return ready.okSince(restarted) })
	stopProbe()
	probe.Wait()
	// More writes after the recovery, then stop.
	log.mu.Lock()
	after := log.counts[acked]
	log.mu.Unlock()
	waitFor(t, "writes after the recovery", 60*time.Second, func() bool {
		log.mu.Lock()
		defer log.mu.Unlock()
		return log.counts[acked] >= after+40
	})
	stopWriters()
	writers.Wait()

	// Every acknowledged write is in a consistent list.
	list, err := cs.ExampleV1().Databases(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list after the restart: %v", err)
	}
	stored := map[string]int{}
	want := map[string]string{}
	for _, d := range list.Items {
		seq, _ := strconv.Atoi(d.Labels["seq"])
		stored[d.Name] = seq
		want[d.Name] = d.ResourceVersion
	}
	log.mu.Lock()
	lost, landed := 0, 0 // acknowledged but not stored; not acknowledged but stored
	for name, seq := range stored {
		if acked, ok := log.acked[name]; !ok || seq > acked {
			landed++
		}
	}
	for name, seq := range log.acked {
		got, ok := stored[name]
		if !ok || got < seq {
			lost++
			_, gerr := cs.ExampleV1().Databases(ns).Get(t.Context(), name, metav1.GetOptions{})
			t.Errorf("acknowledged write lost: %s seq %d, stored %v (present %v); list at %s; GET now: %v", name, seq, got, ok, list.ResourceVersion, gerr)
		}
	}
	for name, seq := range stored {
		if seq > log.attempted[name] {
			t.Errorf("%s stored with seq %d, never written (highest written %d)", name, seq, log.attempted[name])
		}
	}
	unavailable := log.firstOKAfter.Sub(log.firstFail)
	recovered := log.firstOKAfter.Sub(restarted)
	counts, statuses, slowestFail, below500 := log.counts, log.statuses, log.slowestFail, log.below500
	log.mu.Unlock()

	// The watchers converge to that list.
	agree(t, "the raw watch", 60*time.Second, want, raw.snapshot)
	agree(t, "the informer", 60*time.Second, want, func() map[string]string { return informerState(informer.GetStore()) })
	// No goroutine of the server's outlives the outage.
	waitFor(t, "the server's goroutines to return to their number before", 30*time.Second, func() bool {
		return serverGoroutines() <= baseline+2
	})

	raw.mu.Lock()
	resumes, relists, watchErrs := raw.resumes, raw.relists, raw.watchErr
	raw.mu.Unlock()
	codes, firstNotReady, lastNotReady, slowest := ready.summary()
	report := []string{
		fmt.Sprintf("pg_ctl -m %s: writes failed for %.1fs (first failed write to first acknowledged after pg_start); "+
			"database down %.1fs (pg_stop to pg_start returning); first acknowledged write %.2fs after pg_start returned",
			mode, unavailable.Seconds(), restarted.Sub(stopped).Seconds(), recovered.Seconds()),
		fmt.Sprintf("writes: %d acknowledged, %d lost, %d failed with a Status, %d unknown outcome (timeout, no answer, or cut off at the end); "+
			"%d not acknowledged yet stored (allowed); the slowest failure took %.2fs", counts[acked], lost, counts[failed], counts[unknown], landed, slowestFail.Seconds()),
	}
	for s, n := range statuses {
		report = append(report, fmt.Sprintf("  %5d x %s", n, s))
	}
	report = append(report,
		fmt.Sprintf("/readyz: %v; not ready from +%.1fs to +%.1fs after the stop; slowest answer %.1fs",
			codes, firstNotReady.Sub(stopped).Seconds(), lastNotReady.Sub(stopped).Seconds(), slowest.Seconds()),
		fmt.Sprintf("raw watch: %d resumes, %d relists after 410; errors seen: %q", resumes, relists, watchErrs),
		fmt.Sprintf("server goroutines: %d before, %d after", baseline, serverGoroutines()),
	)
	for _, l := range report {
		t.Log(l)
	}
	if slowestFail > requestTimeout+time.Second {
		t.Errorf("a write took %v to fail, past the request timeout %v", slowestFail, requestTimeout)
	}
	if below500 != 0 {
		t.Errorf("%d writes failed with a Status below 500 (see the list above)", below500)
	}
	if lost != 0 {
		t.Errorf("%d acknowledged writes lost", lost)
	}
}

// kineEndpoints starts kine in-process on APILOOM_KINE_ENDPOINT, as
// startKine does, and returns its etcd endpoints.
func kineEndpoints(t *testing.T) []string {
	c := startKine(t)
	return c.Endpoints()
}

func informerState(store cache.Store) map[string]string {
	out := map[string]string{}
	for _, o := range store.List() {
		d := o.(*examplev1.Database)
		out[d.Name] = d.ResourceVersion
	}
	return out
}

// serverGoroutines counts the goroutines running apiloom's server code.
func serverGoroutines() int {
	buf := make([]byte, 8<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "apiloom/apiloom/server/") {
			n++
		}
	}
	return n
}

// waitFor polls cond until it holds, failing t after d.
func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	waitUntil(t, d, func() string {
		if cond() {
			return ""
		}
		return "waiting for " + what
	})
}

// agree waits until state() equals want (name -> resourceVersion), the
// consistent list, failing t after d with how they still differ.
func agree(t *testing.T, who string, d time.Duration, want map[string]string, state func() map[string]string) {
	t.Helper()
	waitUntil(t, d, func() string {
		if differ := diff(want, state()); differ != "" {
			return "waiting for " + who + " to agree with the list: " + differ
		}
		return ""
	})
}

// waitUntil polls pending every 50ms until it answers "", failing t after
// d with its last answer.
func waitUntil(t *testing.T, d time.Duration, pending func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		why := pending()
		if why == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v %s", d, why)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// readyzProbe asks /readyz every 200ms and records the answers.
type readyzProbe struct {
	cfg *rest.Config

	mu            sync.Mutex // guards the fields below
	codes         map[int]int
	firstNotReady time.Time
	lastNotReady  time.Time
	lastOK        time.Time
	slowest       time.Duration
}

func (p *readyzProbe) run(ctx context.Context) {
	hc, err := rest.HTTPClientFor(p.cfg)
	if err != nil {
		return
	}
	for ctx.Err() == nil {
		start := time.Now()
		code := 0
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		req, _ := http.NewRequestWithContext(rctx, http.MethodGet, p.cfg.Host+"/readyz", nil)
		if resp, err := hc.Do(req); err == nil {
			code = resp.StatusCode
			_ = resp.Body.Close()
		}
		cancel()
		took := time.Since(start)
		p.mu.Lock()
		if p.codes == nil {
			p.codes = map[int]int{}
		}
		p.codes[code]++
		p.slowest = max(p.slowest, took)
		if code == http.StatusOK {
			p.lastOK = time.Now()
		} else if ctx.Err() == nil {
			if p.firstNotReady.IsZero() {
				p.firstNotReady = start
			}
			p.lastNotReady = time.Now()
		}
		p.mu.Unlock()
		pause(ctx)
	}
}

func (p *readyzProbe) okSince(t time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastOK.After(t)
}

func (p *readyzProbe) summary() (map[int]int, time.Time, time.Time, time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.codes, p.firstNotReady, p.lastNotReady, p.slowest
}
