package main

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// markerBoard counts, per marker token, how many watchers have seen the
// marker object. A marker proves a watch is live end to end: the server
// registered it and delivers to it.
type markerBoard struct {
	mu     sync.Mutex
	counts map[string]*atomic.Int64 // guarded by mu; the counters are atomic
}

func newMarkerBoard() *markerBoard {
	return &markerBoard{counts: map[string]*atomic.Int64{}}
}

// expect registers token before its marker is written, so that no
// receipt is lost.
func (m *markerBoard) expect(token string) *atomic.Int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.counts[token]
	if c == nil {
		c = new(atomic.Int64)
		m.counts[token] = c
	}
	return c
}

func (m *markerBoard) saw(token string) {
	m.mu.Lock()
	c := m.counts[token]
	m.mu.Unlock()
	if c != nil {
		c.Add(1)
	}
}

// markerResult is how many watchers saw a marker and how long after its
// write the last one did.
type markerResult struct {
	Saw   int64         `json:"saw"`
	After time.Duration `json:"after"`
}

// writeMarker creates a marker object and waits until every open watcher
// of f has seen it, or until timeout. It reports how many did; reaching
// fewer than f.open() is not an error here, the scenario judges it.
func writeMarker(ctx context.Context, t *target, objs *objectFactory, f *fleet, timeout time.Duration) (markerResult, error) {
	token := strconv.FormatInt(time.Now().UnixNano(), 36)
	count := f.markers.expect(token)
	obj := objs.object("load-marker-"+token, "marker")
	obj.SetLabels(map[string]string{labelMarker: token})
	start := time.Now()
	if _, err := t.writer.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		return markerResult{}, fmt.Errorf("create marker: %w", err)
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		n := count.Load()
		if n >= f.open() {
			return markerResult{Saw: n, After: time.Since(start)}, nil
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			return markerResult{Saw: count.Load(), After: time.Since(start)}, nil
		case <-ctx.Done():
			return markerResult{}, ctx.Err()
		}
	}
}
