package aggregation_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	"github.com/apiloom/apiloom/generated/clientset/versioned"
	"github.com/apiloom/apiloom/internal/hostcluster"
)

// measure logs issue 34's figures, through the aggregator against straight
// to apiloom: a watch fan-out, a LIST of many objects, and how many of the
// requests apiloom served made it ask the host to review a token or a
// permission. Nothing here is asserted but that the work completes: the
// figures are for the notes (machines are shared and noisy).
// APILOOM_AGG_WATCHERS, APILOOM_AGG_EVENTS and APILOOM_AGG_LIST change the
// sizes (1000, 50, 10000).
func measure(t *testing.T, host *hostcluster.Cluster, ext *extension) {
	watchers, events, listN := envInt("APILOOM_AGG_WATCHERS", 1000), envInt("APILOOM_AGG_EVENTS", 50), envInt("APILOOM_AGG_LIST", 10000)
	ctx := t.Context()
	kube := kubernetes.NewForConfigOrDie(host.Config)
	for _, ns := range []string{"fan", "bulk"} {
		if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	kubectl(t, host.KubeconfigPath, "create", "role", "db-reader", "-n", "fan", "--verb=get,list,watch", "--resource=databases.example.apiloom.dev")
	kubectl(t, host.KubeconfigPath, "create", "rolebinding", "alice-db-reader", "-n", "fan", "--role=db-reader", "--user="+aliceUser)
	kubectl(t, host.KubeconfigPath, "create", "role", "db-reader", "-n", "bulk", "--verb=get,list,watch", "--resource=databases.example.apiloom.dev")
	kubectl(t, host.KubeconfigPath, "create", "rolebinding", "alice-db-reader", "-n", "bulk", "--role=db-reader", "--user="+aliceUser)
	writer := versioned.NewForConfigOrDie(ext.Direct)
	paths := []struct {
		name string
		cfg  *rest.Config
	}{
		{"direct", ext.Direct},
		{"aggregator", host.UserConfig(aliceToken)},
	}
	hostPID := host.APIServerPID()
	for i, p := range paths {
		before := reviewCounts(t, ext)
		f := fanOut(t, p.cfg, writer, ext.pid(), hostPID, watchers, events, fmt.Sprintf("run%d", i))
		t.Logf("FIGURE fan-out %s: %d watchers x %d events = %d deliveries in %v: %.0f events/s, p50 %v p99 %v; CPU apiloom %.1f µs/event, host kube-apiserver %.1f µs/event; %s",
			p.name, watchers, events, watchers*events, f.elapsed.Round(time.Millisecond), float64(watchers*events)/f.elapsed.Seconds(),
			f.p50.Round(time.Microsecond), f.p99.Round(time.Microsecond), f.apiloomCPU.Seconds()*1e6/float64(watchers*events),
			f.hostCPU.Seconds()*1e6/float64(watchers*events), reviewCounts(t, ext).since(before))
	}

	fill(t, writer, "bulk", listN)
	lat := timeLists(t, listN, paths[0].cfg, paths[1].cfg)
	for i, p := range paths {
		l := lat[i]
		t.Logf("FIGURE LIST %d objects %s: median %v, min %v, max %v", listN, p.name, l[len(l)/2].Round(time.Millisecond),
			l[0].Round(time.Millisecond), l[len(l)-1].Round(time.Millisecond))
	}

	// A host user's token sent straight to apiloom: reviewed by the host
	// (TokenReview), its permission too (SubjectAccessReview), both cached.
	before := reviewCounts(t, ext)
	direct := rest.CopyConfig(ext.Direct)
	direct.BearerToken = aliceToken
	alice := versioned.NewForConfigOrDie(direct)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if _, err := alice.ExampleV1().Databases("fan").List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("FIGURE alice's token straight to apiloom, 400 LISTs 8 at a time: %s", reviewCounts(t, ext).since(before))
	t.Logf("FIGURE whole test: %s", reviewCounts(t, ext).since(reviews{}))
}

// reviews are apiloom's counts of requests it served and of reviews it
// asked the host for.
type reviews struct{ requests, tokenReviews, accessReviews float64 }

func (r reviews) since(before reviews) string {
	n := r.requests - before.requests
	tr, sar := r.tokenReviews-before.tokenReviews, r.accessReviews-before.accessReviews
	return fmt.Sprintf("%.0f requests served, %.0f TokenReviews (%.1f%%) and %.0f SubjectAccessReviews (%.1f%%) sent to the host",
		n, tr, 100*tr/n, sar, 100*sar/n)
}

type fanOutFigures struct {
	elapsed, p50, p99   time.Duration
	apiloomCPU, hostCPU time.Duration
}

// fanOut opens watchers watches of the fan namespace with cfg, creates
// events Databases with writer, and times their delivery to every watcher.
func fanOut(t *testing.T, cfg *rest.Config, writer versioned.Interface, apiloomPID, hostPID, watchers, events int, run string) fanOutFigures {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cs := versioned.NewForConfigOrDie(cfg)
	list, err := cs.ExampleV1().Databases("fan").List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	selector := "run=" + run
	var sent sync.Map // name -> time.Time
	lat := make([][]time.Duration, watchers)
	var wg, opened sync.WaitGroup
	errs := make(chan error, watchers)
	for i := range watchers {
		wg.Add(1)
		opened.Add(1)
		go func() {
			defer wg.Done()
			w, err := cs.ExampleV1().Databases("fan").Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion, LabelSelector: selector})
			opened.Done()
			if err != nil {
				errs <- err
				return
			}
			defer w.Stop()
			for len(lat[i]) < events {
				select {
				case ev, ok := <-w.ResultChan():
					if !ok {
						errs <- fmt.Errorf("watch %d ended after %d events", i, len(lat[i]))
						return
					}
					if ev.Type != watch.Added {
						continue
					}
					at, _ := sent.Load(ev.Object.(*examplev1.Database).Name)
					lat[i] = append(lat[i], time.Since(at.(time.Time)))
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	opened.Wait()
	select {
	case err := <-errs:
		t.Fatalf("open watch: %v", err)
	default:
	}
	cpu0, host0 := processCPU(apiloomPID), processCPU(hostPID)
	start := time.Now()
	for n := range events {
		name := fmt.Sprintf("%s-%d", run, n)
		sent.Store(name, time.Now())
		if _, err := writer.ExampleV1().Databases("fan").Create(ctx, &examplev1.Database{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"run": run}},
			Spec:       examplev1.DatabaseSpec{Engine: "postgres"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case err := <-errs:
		t.Fatal(err)
	case <-time.After(5 * time.Minute):
		t.Fatal("fan-out did not complete in 5 minutes")
	}
	f := fanOutFigures{elapsed: time.Since(start), apiloomCPU: processCPU(apiloomPID) - cpu0, hostCPU: processCPU(hostPID) - host0}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	slices.Sort(all)
	f.p50, f.p99 = all[len(all)/2], all[len(all)*99/100]
	return f
}

// fill creates n Databases in ns, 16 at a time.
func fill(t *testing.T, cs versioned.Interface, ns string, n int) {
	var wg sync.WaitGroup
	next := make(chan int)
	errs := make(chan error, 16)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				_, err := cs.ExampleV1().Databases(ns).Create(t.Context(), &examplev1.Database{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("db-%05d", i)},
					Spec: examplev1.DatabaseSpec{Engine: "postgres", Version: "16.4", Replicas: 3, Region: "eu-central"}}, metav1.CreateOptions{})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := range n {
		select {
		case next <- i:
		case err := <-errs:
			close(next)
			wg.Wait()
			t.Fatal(err)
		}
	}
	close(next)
	wg.Wait()
}

// timeLists lists the bulk namespace with each of cfgs in turn, five
// rounds, and returns each one's sorted latencies.
func timeLists(t *testing.T, want int, cfgs ...*rest.Config) [][]time.Duration {
	lat := make([][]time.Duration, len(cfgs))
	for range 5 {
		for i, cfg := range cfgs {
			start := time.Now()
			code, resp := get(t.Context(), cfg, "/apis/example.apiloom.dev/v1/namespaces/bulk/databases", http.Header{"Accept": {"application/json"}})
			lat[i] = append(lat[i], time.Since(start))
			if code != http.StatusOK {
				t.Fatalf("LIST: %d %s", code, body(resp))
			}
			if n := strings.Count(body(resp), `"name":"db-`); n != want {
				t.Fatalf("LIST returned %d objects, want %d", n, want)
			}
		}
	}
	for _, l := range lat {
		slices.Sort(l)
	}
	return lat
}

// reviewCounts scrapes apiloom's metrics: the requests it served and the
// reviews it sent the host.
func reviewCounts(t *testing.T, ext *extension) reviews {
	code, resp := get(t.Context(), ext.Direct, "/metrics", nil)
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	var r reviews
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(name, "#") {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		switch {
		case name == `apiloom_delegated_reviews_total{resource="tokenreviews"}`:
			r.tokenReviews = v
		case name == `apiloom_delegated_reviews_total{resource="subjectaccessreviews"}`:
			r.accessReviews = v
		case strings.HasPrefix(name, "apiloom_request_duration_seconds_count{"):
			r.requests += v
		}
	}
	return r
}

// processCPU is the user and system CPU time process pid has used.
func processCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command's closing parenthesis; utime and stime
	// are the 14th and 15th of the whole line, in clock ticks (100 Hz).
	_, rest, _ := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * 10 * time.Millisecond
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
