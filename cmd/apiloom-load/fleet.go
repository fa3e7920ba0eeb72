package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apiloom/apiloom/cmd/apiloom-load/internal/accounting"
)

// fleet is a set of watchers from one resourceVersion, spread over a few
// HTTP/2 connections or on an HTTP/1.1 connection each, each watcher a
// goroutine the fleet owns. Events go to an optional Tracker and to the
// marker board.
type fleet struct {
	// Immutable after openFleet.
	n       int
	base    time.Time
	tracker *accounting.Tracker // nil: events are not tracked
	markers *markerBoard
	cancel  context.CancelFunc
	// OpenTime is how long opening all watchers took.
	openTime time.Duration

	wg sync.WaitGroup // the watcher goroutines

	openFailed atomic.Int64 // watch requests that got no stream
	ended      atomic.Int64 // streams that ended before stop
	stopping   atomic.Bool
	errs       errorSample
	conns      sync.Map // local address -> struct{}: connections used
}

// fleetSpec says what to open.
type fleetSpec struct {
	watchers int
	// transport is transportH2 (the default, for "") or transportHTTP1.
	transport      string
	rv             string
	streamsPerConn int // h2 only
	concurrency    int
	// lifetime is the watches' timeoutSeconds: longer than the scenario,
	// so that the server never ends them during it.
	lifetime time.Duration
	tracker  *accounting.Tracker
}

// openFleet opens spec.watchers watches and returns once each has been
// answered (a 200 with streaming begun, or a failure, counted in
// openFailed). It fails only when ctx ends or no client can be built; the
// fleet's goroutines run until stop.
func openFleet(ctx context.Context, t *target, spec fleetSpec) (*fleet, error) {
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	f := &fleet{n: spec.watchers, base: time.Now(), tracker: spec.tracker, markers: newMarkerBoard(), cancel: cancel}
	// h2: a client (so a connection) per streamsPerConn watchers, whose
	// first watch goes alone. http1: one client, whose transport dials a
	// connection for each watch in flight, and no leaders.
	perClient, leaders := spec.streamsPerConn, true
	newClient := t.newHTTPClient
	switch spec.transport {
	case "", transportH2:
	case transportHTTP1:
		perClient, leaders = spec.watchers, false
		newClient = t.newHTTP1Client
	default:
		cancel()
		return nil, fmt.Errorf("%w: watch transport %q (h2 or http1)", errConfig, spec.transport)
	}
	groups := (spec.watchers + perClient - 1) / perClient
	clients := make([]*http.Client, groups)
	for g := range clients {
		c, err := newClient()
		if err != nil {
			cancel()
			return nil, err
		}
		clients[g] = c
	}
	start := time.Now()
	opened := make(chan struct{}, spec.watchers)
	open := func(i int) {
		client := clients[i/perClient]
		f.wg.Go(func() { f.run(runCtx, i, client, t.collection, spec, opened) })
	}
	isLeader := func(i int) bool { return leaders && i%perClient == 0 }
	if leaders {
		// The first watch of each connection goes alone, so that the
		// connection exists before the others pile onto it and the
		// transport does not dial spares.
		for g := range groups {
			open(g * perClient)
		}
		if err := awaitOpened(ctx, opened, groups); err != nil {
			f.stop()
			return nil, err
		}
	}
	pending := 0
	for i := range spec.watchers {
		if isLeader(i) {
			continue
		}
		if pending == spec.concurrency {
			if err := awaitOpened(ctx, opened, 1); err != nil {
				f.stop()
				return nil, err
			}
			pending--
		}
		open(i)
		pending++
	}
	if err := awaitOpened(ctx, opened, pending); err != nil {
		f.stop()
		return nil, err
	}
	f.openTime = time.Since(start)
	return f, nil
}

func awaitOpened(ctx context.Context, opened <-chan struct{}, n int) error {
	for range n {
		select {
		case <-opened:
		case <-ctx.Done():
			return fmt.Errorf("opening watchers: %w", ctx.Err())
		}
	}
	return nil
}

// run is watcher i's goroutine: open, signal, read until the stream ends
// or the fleet stops.
func (f *fleet) run(ctx context.Context, i int, client *http.Client, collection string, spec fleetSpec, opened chan<- struct{}) {
	resp, err := watchRequest(ctx, client, collection, spec.rv, spec.lifetime, func(addr string) { f.conns.Store(addr, struct{}{}) })
	opened <- struct{}{}
	if err != nil {
		if !f.stopping.Load() {
			f.openFailed.Add(1)
			f.errs.add(fmt.Errorf("watcher %d: %w", i, err))
		}
		return
	}
	defer resp.Body.Close()
	err = readEvents(resp.Body, func(ev *watchEvent) {
		if f.tracker != nil {
			f.tracker.Observe(i, ev.seq, ev.rv, int64(ev.at.Sub(f.base)))
		}
		if ev.marker != "" {
			f.markers.saw(ev.marker)
		}
	})
	if f.stopping.Load() {
		return
	}
	f.ended.Add(1)
	if errors.Is(err, io.EOF) {
		err = errors.New("server ended the stream")
	}
	f.errs.add(fmt.Errorf("watcher %d: %w", i, err))
}

// stop ends every watch and waits for the goroutines.
func (f *fleet) stop() {
	f.stopping.Store(true)
	f.cancel()
	f.wg.Wait()
}

// connections is the number of distinct connections the watches used.
func (f *fleet) connections() int {
	n := 0
	f.conns.Range(func(_, _ any) bool { n++; return true })
	return n
}

// open is the number of watchers whose stream is still running.
func (f *fleet) open() int64 {
	return int64(f.n) - f.openFailed.Load() - f.ended.Load()
}

// errorSample keeps the first few errors of many goroutines.
type errorSample struct {
	mu    sync.Mutex
	first []string // guarded by mu
}

const keptErrors = 5

func (e *errorSample) add(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.first) < keptErrors {
		e.first = append(e.first, err.Error())
	}
}

func (e *errorSample) list() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.first...)
}
