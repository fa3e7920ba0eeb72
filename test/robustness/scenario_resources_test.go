package robustness

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/generated/clientset/versioned"
	"github.com/apiloom/apiloom/test/robustness/cluster"
	"github.com/apiloom/apiloom/test/robustness/resources"
	"github.com/apiloom/apiloom/test/robustness/traffic"
)

// backWithin is how long after the traffic stops goroutines, fds and etcd
// watchers have to come back to their baseline: a watch's end reaches the
// server and etcd at once, but an abruptly reset connection is noticed by
// the server's next write or its idle timeout.
const backWithin = 30 * time.Second

// scenarioOptions are what a scenario changes in runScenario's setup.
type scenarioOptions struct {
	cluster []cluster.Option
	// tolerance over the baseline once traffic stops; zero is
	// resources.DefaultTolerance.
	tolerance resources.Tolerance
	// liveHistory records etcd's history during the scenario, for one
	// that compacts etcd (runScenario otherwise reads it afterwards, from
	// revision 1).
	liveHistory bool
}

// trafficPrefix is the etcd prefix of the traffic's objects.
var trafficPrefix = "/registry/example.apiloom.dev/databases/" + trafficConfig.Namespace + "/"

// startLiveHistory starts recording etcd's history when o asks for it,
// until t ends.
func startLiveHistory(ctx context.Context, t *testing.T, c *cluster.Cluster, o scenarioOptions) *traffic.LiveHistory {
	t.Helper()
	if !o.liveHistory {
		return nil
	}
	etcd, err := c.Etcd.Client()
	if err != nil {
		t.Fatal(err)
	}
	h, err := traffic.WatchHistory(ctx, etcd, trafficPrefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(); etcd.Close() })
	return h
}

// history is etcd's history of the traffic's objects: recorded live, or
// read now from revision 1.
func (s *scenario) history(ctx context.Context, etcd *clientv3.Client) ([]traffic.Change, error) {
	if s.live != nil {
		return s.live.Read(ctx)
	}
	return traffic.ReadHistory(ctx, etcd, trafficPrefix)
}

// sampling is a scenario's resource sampling: the sampler, and the
// baseline taken after startup, before the traffic.
type sampling struct {
	*resources.Sampler
	base resources.Reading
	tol  resources.Tolerance
}

// startSampling starts sampling c every second until t ends, first
// opening each client's connection to its replica (so that the baseline
// counts the connection the traffic will use), and takes the baseline.
func startSampling(ctx context.Context, t *testing.T, c *cluster.Cluster, clients []versioned.Interface, o scenarioOptions) *sampling {
	t.Helper()
	for _, cl := range clients {
		if _, err := cl.ExampleV1().Databases(trafficConfig.Namespace).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
			t.Fatal(err)
		}
	}
	p, err := resources.ForCluster(c)
	if err != nil {
		t.Fatal(err)
	}
	s := &sampling{Sampler: resources.New(p, time.Second), tol: o.tolerance}
	if s.tol == (resources.Tolerance{}) {
		s.tol = resources.DefaultTolerance
	}
	s.Start(context.WithoutCancel(ctx))
	t.Cleanup(s.Stop)
	if s.base, err = s.Baseline(ctx, 3); err != nil {
		t.Fatal(err)
	}
	t.Logf("resources baseline: %v", s.base)
	return s
}

// checkBack fails t unless goroutines, fds and etcd watchers come back to
// the baseline (plus tolerance) within backWithin.
func (s *sampling) checkBack(ctx context.Context, t *testing.T, what string) {
	t.Helper()
	start := time.Now()
	r, err := s.WaitBack(ctx, s.base, s.tol, backWithin)
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	t.Logf("%s: back to baseline after %v: %v", what, time.Since(start).Round(time.Second), r)
}

// peaks formats each replica's RSS peak for the FIGURES line.
func (s *sampling) peaks() string {
	var out []string
	for _, p := range s.Peaks() {
		out = append(out, fmt.Sprintf("%.0f MiB", float64(p)/(1<<20)))
	}
	return strings.Join(out, "/")
}
