package main

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

func TestCheckFloorEndpoint(t *testing.T) {
	for _, ok := range []string{"unix:///tmp/x/etcd/etcd.sock", "unix://etcd.sock", "http://127.0.0.1:2379", "http://localhost:2379", "http://[::1]:2379"} {
		if err := checkFloorEndpoint(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "http://10.0.0.1:2379", "https://etcd.example.com:2379", "127.0.0.1:2379", "unix://"} {
		err := checkFloorEndpoint(bad)
		if !errors.Is(err, errConfig) {
			t.Errorf("%q accepted or not a config error: %v", bad, err)
		}
	}
}

// putKV records the puts it is asked for and fails the failAt-th (from 1;
// 0 never).
type putKV struct {
	clientv3.KV
	failAt int

	mu   sync.Mutex
	keys map[string]string // guarded by mu
	n    int               // guarded by mu
}

var errPutFailed = errors.New("put failed")

// errNotCanceled is what a put after the failing one returns if the
// failure did not cancel it in time.
var errNotCanceled = errors.New("put after the failure: not cancelled")

func (k *putKV) Put(ctx context.Context, key, val string, _ ...clientv3.OpOption) (*clientv3.PutResponse, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.n++
	if k.failAt > 0 && k.n == k.failAt {
		return nil, errPutFailed
	}
	if k.failAt > 0 && k.n > k.failAt {
		// In flight when the failure came: held until the failure cancels
		// it, so that no put can succeed after the failing one.
		k.mu.Unlock()
		defer k.mu.Lock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(10 * time.Second):
			return nil, errNotCanceled
		}
	}
	if k.keys == nil {
		k.keys = map[string]string{}
	}
	k.keys[key] = val
	return &clientv3.PutResponse{}, nil
}

// TestFloorPutAll: every key once, under the floor's prefix, with the
// value; a latency per put.
func TestFloorPutAll(t *testing.T) {
	kv := &putKV{}
	lat, err := floorPutAll(t.Context(), kv, "v", 1000, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(lat) != 1000 || len(kv.keys) != 1000 || kv.n != 1000 {
		t.Fatalf("%d latencies, %d distinct keys, %d puts; want 1000 each", len(lat), len(kv.keys), kv.n)
	}
	for k, v := range kv.keys {
		if !strings.HasPrefix(k, floorPrefix) || v != "v" {
			t.Fatalf("put %q=%q", k, v)
		}
	}
	if _, ok := kv.keys[floorPrefix+"000999"]; !ok {
		t.Error("last key missing")
	}
}

// TestFloorPutAllStopsAtError: a failed put ends the run with its error,
// and the latencies are only those of the puts that succeeded.
func TestFloorPutAllStopsAtError(t *testing.T) {
	kv := &putKV{failAt: 50}
	lat, err := floorPutAll(t.Context(), kv, "v", 100000, 4)
	if !errors.Is(err, errPutFailed) {
		t.Fatalf("err = %v", err)
	}
	// Every put before the failing one succeeded and was timed; each other
	// worker has at most one put in flight when the failure cancels them.
	if len(lat) != 49 || len(kv.keys) != 49 || kv.n > 50+3 {
		t.Fatalf("%d latencies for %d stored keys after %d puts", len(lat), len(kv.keys), kv.n)
	}
}

// TestRunFloorNeedsEndpoint: asking for the floor without an etcd, or
// with one off this machine, fails before any connection.
func TestRunFloorNeedsEndpoint(t *testing.T) {
	c := defaultConfig()
	c.Kubeconfig = "/nonexistent/kubeconfig"
	for _, endpoint := range []string{"", "http://192.0.2.1:2379"} {
		c.FloorEtcd = endpoint
		_, err := run(t.Context(), &c, []string{"list", "floor"}, t.Logf)
		if !errors.Is(err, errConfig) || !strings.Contains(err.Error(), "--floor-etcd") {
			t.Errorf("floor with %q: %v", endpoint, err)
		}
	}
}
