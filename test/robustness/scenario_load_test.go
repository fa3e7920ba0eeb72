package robustness

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	"github.com/apiloom/apiloom/test/robustness/check"
	"github.com/apiloom/apiloom/test/robustness/cluster"
	"github.com/apiloom/apiloom/test/robustness/traffic"
)

// databasesPath is the API path of the Databases of namespace ns.
func databasesPath(ns string) string {
	return "/apis/example.apiloom.dev/v1/namespaces/" + ns + "/databases"
}

// TestDefragUnderLoad defragments each etcd member in turn under traffic
// (a defragmentation blocks the member's reads and writes while it
// rewrites its database).
func TestDefragUnderLoad(t *testing.T) {
	runScenario(t, func(ctx context.Context, s *scenario) {
		for _, m := range s.c.Etcd.Members {
			c, err := clientv3.New(clientv3.Config{Endpoints: []string{m.ClientURL}, DialTimeout: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			since := time.Now()
			dctx, cancel := context.WithTimeout(ctx, time.Minute)
			_, err = c.Defragment(dctx, m.ClientURL)
			cancel()
			c.Close()
			if err != nil {
				t.Fatalf("defragment %s: %v", m.Name, err)
			}
			t.Logf("defragmented %s in %v", m.Name, time.Since(since).Round(time.Millisecond))
			s.waitAcks(ctx, since, 0, 1)
		}
	})
}

// churnRounds and churnWatches: TestWatchChurn opens churnWatches watches,
// churnRounds times, and resets them all.
const (
	churnRounds  = 10
	churnWatches = 500
	// churnTolerance during traffic: the traffic's own requests in flight
	// come and go on top of the round's baseline.
	churnGoroutines = 40
)

// TestWatchChurn: 10 rounds of 500 watches (each on a connection of its
// own, half on the traffic's namespace, half on a namespace without
// events, alternating replicas) opened, then reset with an RST; after each
// round goroutines, fds and etcd watchers are back to what they were under
// the traffic before the first round.
func TestWatchChurn(t *testing.T) {
	runScenario(t, func(ctx context.Context, s *scenario) {
		var dialers []*rawDialer
		for _, r := range s.c.Replicas {
			d, err := newRawDialer(r)
			if err != nil {
				t.Fatal(err)
			}
			dialers = append(dialers, d)
		}
		base, err := s.res.Baseline(ctx, 3)
		if err != nil {
			t.Fatal(err)
		}
		tol := s.res.tol
		tol.Goroutines = churnGoroutines
		t.Logf("baseline under traffic: %v", base)
		for round := range churnRounds {
			since := time.Now()
			ws := make([]*rawWatch, churnWatches)
			errs := make([]error, churnWatches)
			var wg sync.WaitGroup
			sem := make(chan struct{}, 50) // dials in flight
			for i := range ws {
				wg.Add(1)
				sem <- struct{}{}
				go func() {
					defer wg.Done()
					defer func() { <-sem }()
					ns := trafficConfig.Namespace
					if i%2 == 1 {
						ns = "churn-quiet"
					}
					ws[i], errs[i] = dialers[(i/2)%len(dialers)].watch(ctx, databasesPath(ns), 0)
				}()
			}
			wg.Wait()
			opened := s.res.Sample(ctx)
			for i, w := range ws {
				if errs[i] != nil {
					t.Fatalf("round %d: watch %d: %v", round, i, errs[i])
				}
				w.reset()
			}
			back, err := s.res.WaitBack(ctx, base, tol, backWithin)
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			t.Logf("round %d: %d watches open: %v; reset, back in %v: %v", round, churnWatches, opened, time.Since(since).Round(time.Second), back)
		}
	})
}

// neverReading is how many watchers of TestNeverReadingWatchers never
// read; neverReadingRSS is the RSS each may add at most.
const (
	neverReading = 50
	// Each watch is a cursor into the cache's shared history (no queue of
	// its own) and a connection's buffers (a TLS record and the response
	// writer's: tens of KiB): 1 MiB each is generous, and makes a copy of
	// the events per watcher (what a queue per watcher would hold) fail.
	neverReadingRSS = 1 << 20
	// fillersRSS is what the fillers themselves may add, once, in the
	// shared history: decoded, encoded, in transit, and the heap's
	// headroom for them (GOGC=100): 8 × their 6 MiB. Measured without
	// never-reading watches (TestCompactionStalledWatcher, one stalled
	// watcher): +38 MiB.
	fillersRSS = 8 * fillers * 200 << 10
	// neverReadingTimeout is the replicas' --watch-write-timeout here
	// (60 s by default): a watch whose client accepts none of its data for
	// this long is ended.
	neverReadingTimeout = 10 * time.Second
	// warmWrites: acknowledged writes before the watches open (more than
	// the watch cache's window of 4096 events).
	warmWrites = 5000
)

// TestNeverReadingWatchers: 50 watchers (25 per replica, each on its own
// connection with a 4 KiB receive buffer) open a watch of the traffic's
// namespace and never read; 6 MiB of big objects follow. Each replica's
// RSS stays within its peak before them plus 1 MiB per watcher and 48 MiB
// for the big objects (a copy of them per watcher would be 150 MiB), the servers end the watches after
// --watch-write-timeout, and the normal watchers see everything (the
// checkers).
func TestNeverReadingWatchers(t *testing.T) {
	o := scenarioOptions{cluster: []cluster.Option{cluster.WithReplicaArgs("--watch-write-timeout", neverReadingTimeout.String())}}
	runScenarioWith(t, o, func(ctx context.Context, s *scenario) {
		// Warm up first: the watch cache's window (4096 events) fills and
		// the heap with it, which is not the watches' doing.
		err := cluster.Until(ctx, "the watch cache's window full", func(context.Context) (bool, error) {
			n := 0
			for _, op := range s.rec.Ops() {
				if op.Outcome == traffic.Acknowledged {
					n++
				}
			}
			return n > warmWrites, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		before := s.res.Peaks()
		since := time.Now()
		var ws []*rawWatch
		for i := range neverReading {
			d, err := newRawDialer(s.c.Replicas[i%2])
			if err != nil {
				t.Fatal(err)
			}
			w, err := d.watch(ctx, databasesPath(trafficConfig.Namespace), 4<<10)
			if err != nil {
				t.Fatalf("watch %d: %v", i, err)
			}
			ws = append(ws, w)
		}
		s.createFillers(ctx, "neverfill")
		s.hold(ctx, 0, 1) // traffic flows past the stalled watches
		// The server's send buffer fills first, then the timeout runs:
		// give each watch three timeouts before reading it (reading would
		// restart its clock), and the drain as much again.
		wait := time.NewTimer(time.Until(since.Add(3 * neverReadingTimeout)))
		select {
		case <-ctx.Done():
		case <-wait.C:
		}
		for i, w := range ws {
			if err := w.drainUntilClosed(neverReadingTimeout + 5*time.Second); err != nil {
				t.Errorf("never-reading watch %d (replica %d): %v: the server did not end it", i, i%2, err)
			}
		}
		peaks := s.res.PeakSince(since)
		for i, p := range peaks {
			bound := before[i] + neverReading/2*neverReadingRSS + fillersRSS
			t.Logf("replica %d: RSS peak %.1f MiB with the never-reading watches, %.1f MiB before (bound %.1f MiB)",
				i, float64(p)/(1<<20), float64(before[i])/(1<<20), float64(bound)/(1<<20))
			if p > bound {
				t.Errorf("replica %d: RSS peak %d with %d never-reading watches, above the bound %d", i, p, neverReading/2, bound)
			}
		}
	})
}

// noSpaceQuota is etcd's --quota-backend-bytes in TestEtcdNoSpace.
const noSpaceQuota = 48 << 20

// TestEtcdNoSpace: etcd's quota is small; big objects fill it until etcd
// raises its NOSPACE alarm: writes get 507 as test/e2e/storagespace_test.go
// expects for the embedded etcd (with the message for an external one),
// reads go on. Then what an operator does (apiloom does it by itself only
// for its embedded etcd): delete the big objects, compact, defragment each
// member, disarm the alarm; writes work again. No acknowledged write lost.
func TestEtcdNoSpace(t *testing.T) {
	o := scenarioOptions{cluster: []cluster.Option{cluster.WithEtcdArgs("--quota-backend-bytes", fmt.Sprint(noSpaceQuota))}, liveHistory: true}
	runScenarioWith(t, o, func(ctx context.Context, s *scenario) {
		dbs := s.clients[0].ExampleV1().Databases("filler")
		ns := s.clients[0].ExampleV1().Databases(trafficConfig.Namespace)
		if _, err := kubeClient(t, s.c.Replicas[0]).CoreV1().Namespaces().Create(ctx, namespace("filler"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var made []string
		var full error
		for i := 0; full == nil; i++ {
			if i > 2*noSpaceQuota/(200<<10) {
				t.Fatalf("%d big objects created and etcd not full", i)
			}
			name := fmt.Sprintf("big-%04d", i)
			_, err := dbs.Create(ctx, bigDatabase(name), metav1.CreateOptions{})
			var st apierrors.APIStatus
			switch {
			case err == nil:
				made = append(made, name)
			case errors.As(err, &st) && st.Status().Code == http.StatusInsufficientStorage:
				full = err
			default:
				t.Fatalf("create %s: %v", name, err)
			}
		}
		st := full.(apierrors.APIStatus).Status()
		t.Logf("etcd full after %d big objects: %d %s %q", len(made), st.Code, st.Reason, st.Message)
		if st.Reason != metav1.StatusReasonInternalError || !strings.Contains(st.Message, "etcdctl alarm disarm") {
			t.Errorf("507 %s %q: want InternalError, a message saying what to do", st.Reason, st.Message)
		}
		// Every replica refuses writes, and serves reads.
		for i, cl := range s.clients {
			_, err := cl.ExampleV1().Databases("filler").Create(ctx, bigDatabase(fmt.Sprintf("more-%d", i)), metav1.CreateOptions{})
			if !isInsufficientStorage(err) {
				t.Errorf("replica %d: create when full: %v, want 507", i, err)
			}
			if _, err := cl.ExampleV1().Databases(trafficConfig.Namespace).List(ctx, metav1.ListOptions{}); err != nil {
				t.Errorf("replica %d: list when full: %v", i, err)
			}
			if _, err := cl.ExampleV1().Databases("filler").Get(ctx, made[0], metav1.GetOptions{}); err != nil {
				t.Errorf("replica %d: get when full: %v", i, err)
			}
		}
		w, err := ns.Watch(ctx, metav1.ListOptions{})
		if err != nil {
			t.Errorf("watch when full: %v", err)
		} else {
			w.Stop()
		}
		fullSince := time.Now()
		s.hold(ctx) // traffic meets the full etcd: its writes get 507
		// The operator's repair: delete, compact, defragment, disarm.
		for _, name := range made {
			if err := dbs.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				t.Fatalf("delete %s when full: %v", name, err)
			}
		}
		etcd, err := s.c.Etcd.Client()
		if err != nil {
			t.Fatal(err)
		}
		defer etcd.Close()
		if err := operatorRecover(ctx, etcd, s.c.Etcd); err != nil {
			t.Fatal(err)
		}
		t.Logf("recovered %v after etcd filled up", time.Since(fullSince).Round(time.Second))
		if _, err := dbs.Create(ctx, bigDatabase("after"), metav1.CreateOptions{}); err != nil {
			t.Errorf("create after the repair: %v", err)
		}
	})
}

// operatorRecover does what etcd's maintenance guide says after a NOSPACE
// alarm once space was freed: compact to the current revision, defragment
// every member, disarm the alarm.
func operatorRecover(ctx context.Context, etcd *clientv3.Client, e *cluster.Etcd) error {
	rev, err := etcd.Get(ctx, "health")
	if err != nil {
		return err
	}
	if _, err := etcd.Compact(ctx, rev.Header.Revision, clientv3.WithCompactPhysical()); err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	for _, m := range e.Members {
		if _, err := etcd.Defragment(ctx, m.ClientURL); err != nil {
			return fmt.Errorf("defragment %s: %w", m.Name, err)
		}
	}
	alarms, err := etcd.AlarmList(ctx)
	if err != nil {
		return err
	}
	for _, a := range alarms.Alarms {
		if _, err := etcd.AlarmDisarm(ctx, (*clientv3.AlarmMember)(a)); err != nil {
			return fmt.Errorf("disarm: %w", err)
		}
	}
	return nil
}

func isInsufficientStorage(err error) bool {
	var st apierrors.APIStatus
	return errors.As(err, &st) && st.Status().Code == http.StatusInsufficientStorage
}

// bigDatabase carries 200 KiB in an annotation (under Kubernetes' 256 KiB
// limit for all annotations), to fill etcd quickly.
func bigDatabase(name string) *examplev1.Database {
	return &examplev1.Database{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"example.apiloom.dev/filler": strings.Repeat("x", 200<<10)}},
		Spec:       examplev1.DatabaseSpec{Engine: "postgres", Version: "16.4", Replicas: 1, StorageGiB: 10},
	}
}

// TestCorruptValue writes bytes that do not decode at a Database's key
// straight into etcd (in a namespace of its own, so that the traffic's
// history stays the writers'). Both replicas answer GET and DELETE of it
// with kube-apiserver's 500 (StorageError: corrupt object), leave it out
// of lists, and keep serving the traffic; a watch of every namespace goes
// on; the unsafe delete (ignoreStoreReadErrorWithClusterBreakingPotential)
// removes it; neither replica restarts.
func TestCorruptValue(t *testing.T) {
	runScenario(t, func(ctx context.Context, s *scenario) {
		const ns, name = "robust-corrupt", "bad"
		if _, err := kubeClient(t, s.c.Replicas[0]).CoreV1().Namespaces().Create(ctx, namespace(ns), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		pids := []int{s.c.Replicas[0].Pid(), s.c.Replicas[1].Pid()}
		var alls []watch.Interface
		for _, cl := range s.clients {
			w, err := cl.ExampleV1().Databases("").Watch(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			alls = append(alls, w)
		}
		etcd, err := s.c.Etcd.Client()
		if err != nil {
			t.Fatal(err)
		}
		defer etcd.Close()
		key := "/registry/example.apiloom.dev/databases/" + ns + "/" + name
		put, err := etcd.Put(ctx, key, "not json")
		if err != nil {
			t.Fatal(err)
		}
		since := time.Now()
		s.waitAcks(ctx, since, 0, 1) // the traffic goes on
		want := fmt.Sprintf("Internal error occurred: StorageError: corrupt object, Code: 7, Key: /example.apiloom.dev/databases/%s/%s, ResourceVersion: 0, "+
			"AdditionalErrorMsg: object not decodable revision=%d: invalid character 'o' in literal null (expecting 'u')", ns, name, put.Header.Revision)
		for i, cl := range s.clients {
			dbs := cl.ExampleV1().Databases(ns)
			for _, rv := range []string{"", "0"} {
				_, err := dbs.Get(ctx, name, metav1.GetOptions{ResourceVersion: rv})
				expectStatus(t, fmt.Sprintf("replica %d: get at %q", i, rv), err, http.StatusInternalServerError, metav1.StatusReasonInternalError, want)
				l, err := dbs.List(ctx, metav1.ListOptions{ResourceVersion: rv})
				if err != nil || len(l.Items) != 0 {
					t.Errorf("replica %d: list at %q: %v (%d items), want no error and no items", i, rv, err, len(l.Items))
				}
			}
			err := dbs.Delete(ctx, name, metav1.DeleteOptions{})
			expectStatus(t, fmt.Sprintf("replica %d: delete", i), err, http.StatusInternalServerError, metav1.StatusReasonInternalError, want)
		}
		// The watches of every namespace carry on with the traffic's events.
		for i, w := range alls {
			if err := eventAfter(ctx, w, put.Header.Revision); err != nil {
				t.Errorf("replica %d: watch of every namespace: %v", i, err)
			}
		}
		unsafe := true
		if err := s.clients[1].ExampleV1().Databases(ns).Delete(ctx, name, metav1.DeleteOptions{IgnoreStoreReadErrorWithClusterBreakingPotential: &unsafe}); err != nil {
			t.Fatalf("unsafe delete: %v", err)
		}
		for i, cl := range s.clients {
			err := cluster.Until(ctx, "the corrupt object gone", func(ctx context.Context) (bool, error) {
				_, err := cl.ExampleV1().Databases(ns).Get(ctx, name, metav1.GetOptions{})
				if apierrors.IsNotFound(err) {
					return true, nil
				}
				return false, err
			})
			if err != nil {
				t.Errorf("replica %d: %v", i, err)
			}
			if p := s.c.Replicas[i].Pid(); p != pids[i] {
				t.Errorf("replica %d restarted (pid %d, was %d)", i, p, pids[i])
			}
		}
	})
}

// eventAfter waits for an event of w after revision rev.
func eventAfter(ctx context.Context, w watch.Interface, rev int64) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("no event after revision %d: %w", rev, ctx.Err())
		case ev, ok := <-w.ResultChan():
			if !ok {
				return errors.New("watch ended")
			}
			if ev.Type == watch.Error {
				return fmt.Errorf("error event: %v", apierrors.FromObject(ev.Object))
			}
			if d, ok := ev.Object.(*examplev1.Database); ok && rvOf(d.ResourceVersion) > rev {
				return nil
			}
		}
	}
}

func rvOf(s string) int64 {
	var n int64
	fmt.Sscan(s, &n)
	return n
}

// expectStatus fails t unless err is a Status with code, reason and message.
func expectStatus(t *testing.T, what string, err error, code int32, reason metav1.StatusReason, msg string) {
	t.Helper()
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		t.Errorf("%s: %v, want a %d Status", what, err, code)
		return
	}
	if s := st.Status(); s.Code != code || s.Reason != reason || s.Message != msg {
		t.Errorf("%s: %d %s %q\nwant %d %s %q", what, s.Code, s.Reason, s.Message, code, reason, msg)
	}
}

// diskFullSize is the tmpfs under one member's data: etcd preallocates
// its write-ahead log in 64 MiB segments, the current one and the next,
// so 128 MiB of it are taken at start; the rest fills with the database.
const diskFullSize = "160m"

// TestDiskFullMember puts member 2's data on a 160 MiB tmpfs and fills the
// cluster with 1 MiB values (straight into etcd, outside the traffic's
// prefix) until that member runs out of space and dies; the other two
// serve on. Then the tmpfs is enlarged and the member restarted on its
// data: it catches up. No acknowledged write lost.
func TestDiskFullMember(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounts a tmpfs: needs root")
	}
	if _, err := exec.LookPath("mount"); err != nil {
		t.Skip("no mount(8)")
	}
	var mounted string
	t.Cleanup(func() { // after the cluster's own cleanup (registered later, run first)
		if mounted == "" {
			return
		}
		if out, err := exec.Command("umount", mounted).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", mounted, err, out)
		}
		if !t.Failed() {
			os.RemoveAll(filepath.Dir(mounted))
		}
	})
	prepare := func(i int, dir string) error {
		if i != 2 {
			return nil
		}
		if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+diskFullSize, "tmpfs", dir).CombinedOutput(); err != nil {
			return fmt.Errorf("mount tmpfs on %s: %v %s", dir, err, out)
		}
		mounted = dir
		return nil
	}
	o := scenarioOptions{cluster: []cluster.Option{cluster.WithMemberDir(prepare)}}
	runScenarioWith(t, o, func(ctx context.Context, s *scenario) {
		m := s.c.Etcd.Members[2]
		etcd, err := clientv3.New(clientv3.Config{Endpoints: s.c.Etcd.Endpoints()[:2], DialTimeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer etcd.Close()
		value := strings.Repeat("x", 1<<20)
		since := time.Now()
		for i := 0; m.Running(); i++ {
			if i > 400 {
				t.Fatalf("%d MiB written and %s still running", i, m.Name)
			}
			pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			_, err := etcd.Put(pctx, fmt.Sprintf("/filler/%04d", i), value)
			cancel()
			if err != nil {
				t.Fatalf("filler put %d: %v", i, err)
			}
		}
		t.Logf("%s stopped after %v of filling its disk", m.Name, time.Since(since).Round(time.Second))
		s.hold(ctx, 0, 1) // the two others serve on
		if out, err := exec.Command("mount", "-o", "remount,size=1g", mounted).CombinedOutput(); err != nil {
			t.Fatalf("remount: %v %s", err, out)
		}
		s.restartEtcd(ctx, m)
		if _, err := etcd.Delete(ctx, "/filler/", clientv3.WithPrefix()); err != nil {
			t.Fatal(err)
		}
	})
}

// stallChanges is how many changes pass while the stalled watcher reads
// nothing: more than the watch cache's window of 4096 events.
const stallChanges = 5000

// fillers: 200 KiB objects created in the traffic's namespace while
// watchers do not read, 6 MiB in all, more than a socket's send buffer
// (tcp_wmem's 4 MiB on this kernel) holds: the server's writes to them
// block at once instead of after minutes of the traffic's small events.
const fillers = 30

// createFillers creates the fillers, named prefix-i, through replica 1.
func (s *scenario) createFillers(ctx context.Context, prefix string) {
	s.t.Helper()
	for i := range fillers {
		if _, err := s.clients[1].ExampleV1().Databases(trafficConfig.Namespace).Create(ctx, bigDatabase(fmt.Sprintf("%s-%d", prefix, i)), metav1.CreateOptions{}); err != nil {
			s.t.Fatal(err)
		}
	}
}

// TestCompactionStalledWatcher: both replicas compact etcd every 2 s
// (--etcd-compaction-interval) and a watcher stops reading while 5000
// changes pass, enough for the revision it stopped at to be compacted and
// to leave the watch cache's window: when it reads
// again it gets every event in order or a 410 Expired, after which it
// relists; its record is checked like the traffic's watchers'. The
// others are unaffected (the checkers).
func TestCompactionStalledWatcher(t *testing.T) {
	o := scenarioOptions{cluster: []cluster.Option{cluster.WithReplicaArgs("--etcd-compaction-interval", "2s")}, liveHistory: true}
	runScenarioWith(t, o, func(ctx context.Context, s *scenario) {
		w := &stallingWatch{paused: make(chan struct{}), resume: make(chan struct{})}
		done := make(chan error, 1)
		wctx, stop := context.WithCancel(ctx)
		defer stop()
		d, err := newRawDialer(s.c.Replicas[0])
		if err != nil {
			t.Fatal(err)
		}
		go func() { done <- w.run(wctx, s.clients[0], d) }()
		select {
		case <-w.paused:
		case err := <-done:
			t.Fatal(err)
		}
		since := time.Now()
		// The kernel buffers up to 4 MiB (tcp_wmem) of what the server
		// sends the stalled watcher: big objects fill that, so that the
		// server's writes block and its cursor stays behind.
		s.createFillers(ctx, "stallfill")
		// Stalled until more changes than the watch cache's window holds
		// have passed (each acknowledged write is one), whatever the
		// machine's pace.
		err = cluster.Until(ctx, "the stalled watcher's revision out of the window", func(context.Context) (bool, error) {
			n := 0
			for _, op := range s.rec.Ops() {
				if op.Outcome == traffic.Acknowledged && op.Call.After(since) {
					n++
				}
			}
			return n > stallChanges, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("stalled for %v", time.Since(since).Round(time.Second))
		close(w.resume)
		s.waitAcks(ctx, time.Now(), 0, 1)
		last := int64(0)
		for _, op := range s.rec.Ops() {
			last = max(last, rvOf(op.ResourceVersion))
		}
		err = cluster.Until(ctx, "the stalled watcher caught up", func(context.Context) (bool, error) {
			return w.lastRV.Load() >= last, nil
		})
		stop()
		if werr := <-done; werr != nil && !errors.Is(werr, context.Canceled) {
			t.Error(werr)
		}
		if err != nil {
			t.Fatal(err)
		}
		hist, err := s.live.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		h, e, _ := traffic.ForCheckers(nil, nil, hist, []*traffic.Watch{{Segments: w.segs}}, nil)
		r := check.WatchStreams(h, e)
		if !r.OK() {
			t.Errorf("stalled watcher:\n%s", r.String())
		}
		t.Logf("stalled watcher: %d segments, %d relists after 410, %d resumes; checker %s: %d checked, %d failures",
			len(w.segs), w.relists, w.resumes, r.Checker, r.Checked, len(r.Failures))
		if w.relists == 0 {
			t.Errorf("the stalled watcher never got 410: its revision did not leave the window, the scenario proves nothing")
		}
	})
}
