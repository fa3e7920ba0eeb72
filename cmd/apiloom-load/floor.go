package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/cmd/apiloom-load/internal/accounting"
)

// floorPrefix is where the floor's keys go: outside every prefix a server
// stores or watches (apiloom and kube-apiserver use /registry), so that
// the puts reach etcd and no server's watch.
const floorPrefix = "/apiloom-load-floor/"

// floorResult is the outcome of the floor scenario: what the target's own
// etcd does with plain puts at the create phase's concurrency, the bound
// no API server's create throughput can pass.
type floorResult struct {
	Endpoint string `json:"endpoint"`
	Puts     int64  `json:"puts"`
	Workers  int    `json:"workers"`
	// ValueBytes is the size of each value: a list-scenario object as the
	// server returns it (JSON), or as the creates send it when none
	// exists; ValueSource says which.
	ValueBytes  int                  `json:"valueBytes"`
	ValueSource string               `json:"valueSource"`
	Time        time.Duration        `json:"time"`
	Rate        float64              `json:"rate"`
	Latency     accounting.Latencies `json:"latency"`
	CPU         cpuSpan              `json:"cpu"`
	// Deleted is how many keys the range delete afterwards removed.
	Deleted int64  `json:"deleted"`
	Error   string `json:"error,omitempty"`
}

// errFloorEndpoint is a --floor-etcd that is missing or not on this
// machine.
var errFloorEndpoint = fmt.Errorf("%w: --floor-etcd", errConfig)

// checkFloorEndpoint accepts a unix socket (unix:///path, unix://path) or
// an http URL of a loopback host: the floor's puts, like all the load,
// never leave the machine.
func checkFloorEndpoint(endpoint string) error {
	if endpoint == "" {
		return fmt.Errorf("%w: required by the floor scenario (the target's etcd: a unix:// socket or a loopback http:// URL)", errFloorEndpoint)
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return fmt.Errorf("%w: %v", errFloorEndpoint, err)
	}
	switch u.Scheme {
	case "unix", "unixs":
		if u.Host == "" && u.Path == "" {
			return fmt.Errorf("%w: %q names no socket", errFloorEndpoint, endpoint)
		}
		return nil
	case "http":
		if checkLoopbackURL(endpoint) != nil {
			return fmt.Errorf("%w: %q is not a loopback address", errFloorEndpoint, endpoint)
		}
		return nil
	}
	return fmt.Errorf("%w: %q: unix:// or http:// only", errFloorEndpoint, endpoint)
}

// floorPuts is how many puts the floor makes: --floor-puts, or as many as
// the list scenario creates.
func (c *config) floorPuts() int {
	if c.FloorPuts > 0 {
		return c.FloorPuts
	}
	return c.ListObjects
}

// runFloor puts floorPuts new keys of an object's size into the target's
// etcd from ListCreators workers, times each, and then removes them all
// with one range delete, so that later scenarios meet the etcd the server
// left.
func runFloor(ctx context.Context, c *config, t *target, objs *objectFactory, s *sampler, logf logFunc) (*floorResult, error) {
	if err := checkFloorEndpoint(c.FloorEtcd); err != nil {
		return nil, err
	}
	value, source, err := floorValue(ctx, t, objs)
	if err != nil {
		return nil, err
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{c.FloorEtcd},
		DialTimeout: 10 * time.Second,
		Logger:      zap.NewNop(),
		Context:     ctx,
	})
	if err != nil {
		return nil, fmt.Errorf("floor: etcd client: %w", err)
	}
	defer cli.Close()
	// Leftovers of an interrupted run would make the puts updates.
	if _, err := cli.Delete(ctx, floorPrefix, clientv3.WithPrefix()); err != nil {
		return nil, fmt.Errorf("floor: clear %s: %w", floorPrefix, err)
	}
	n := c.floorPuts()
	res := &floorResult{Endpoint: c.FloorEtcd, Workers: c.ListCreators, ValueBytes: len(value), ValueSource: source}
	logf("floor: %d puts of %d bytes into %s with %d workers", n, len(value), c.FloorEtcd, c.ListCreators)
	before := s.sample(ctx)
	start := time.Now()
	lat, putErr := floorPutAll(ctx, cli, string(value), n, c.ListCreators)
	res.Time = time.Since(start)
	res.CPU, _ = cpuBetween(before, s.sample(ctx))
	res.Puts = int64(len(lat))
	res.Rate = float64(res.Puts) / res.Time.Seconds()
	res.Latency = accounting.Summarize(lat)
	if putErr != nil {
		res.Error = putErr.Error()
	}
	// Whatever happened, the keys go: on a context that outlives a
	// cancelled run for a moment.
	delCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	del, err := cli.Delete(delCtx, floorPrefix, clientv3.WithPrefix())
	if err != nil {
		return res, fmt.Errorf("floor: delete %s: %w", floorPrefix, err)
	}
	res.Deleted = del.Deleted
	logf("floor: %d puts in %v = %.0f/s, p50 %s p99 %s; %d keys deleted",
		res.Puts, res.Time.Round(time.Millisecond), res.Rate, ms(res.Latency.P50), ms(res.Latency.P99), res.Deleted)
	return res, ctx.Err()
}

// floorValue is the bytes each put stores: the first list-scenario object
// as the server holds it (its JSON, with the server's metadata), or the
// object the creates send when the list scenario has not run.
func floorValue(ctx context.Context, t *target, objs *objectFactory) ([]byte, string, error) {
	name := "load-list-000000"
	got, err := t.writer.Get(ctx, name, metav1.GetOptions{})
	switch {
	case err == nil:
		b, err := json.Marshal(got.Object)
		return b, "stored " + name, err
	case apierrors.IsNotFound(err):
		b, err := json.Marshal(objs.object(name, "load-list").Object)
		return b, "as created", err
	}
	return nil, "", fmt.Errorf("floor: read %s for its size: %w", name, err)
}

// floorPutAll puts the keys floorPrefix000000 .. n-1 from workers
// goroutines and returns the latency of each put that succeeded; it
// stops at the first error, which it returns.
func floorPutAll(ctx context.Context, kv clientv3.KV, value string, n, workers int) ([]time.Duration, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var mu sync.Mutex
	lat := make([]time.Duration, 0, n) // guarded by mu
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			mine := make([]time.Duration, 0, n/workers+1)
			defer func() {
				mu.Lock()
				lat = append(lat, mine...)
				mu.Unlock()
			}()
			for {
				i := next.Add(1) - 1
				if i >= int64(n) || ctx.Err() != nil {
					return
				}
				start := time.Now()
				if _, err := kv.Put(ctx, fmt.Sprintf("%s%06d", floorPrefix, i), value); err != nil {
					cancel(fmt.Errorf("floor: put: %w", err))
					return
				}
				mine = append(mine, time.Since(start))
			}
		})
	}
	wg.Wait()
	return lat, context.Cause(ctx)
}
