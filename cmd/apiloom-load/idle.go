package main

import (
	"context"
	"time"

	"github.com/apiloom/apiloom/cmd/apiloom-load/internal/procfs"
)

// idleResult is the outcome of the idle scenario.
type idleResult struct {
	Watchers    int           `json:"watchers"`
	Connections int           `json:"connections"`
	OpenTime    time.Duration `json:"openTime"`
	// MarkerSawAtOpen and MarkerSawAfterHold count watchers that delivered
	// a marker right after opening and again after the hold: the second is
	// the number proven still open.
	MarkerSawAtOpen    int64         `json:"markerSawAtOpen"`
	MarkerSawAfterHold int64         `json:"markerSawAfterHold"`
	Dropped            int64         `json:"dropped"`
	Errors             []string      `json:"errors,omitempty"`
	Hold               time.Duration `json:"hold"`

	RSSBeforeKiB int64 `json:"rssBeforeKiB"`
	RSSAfterKiB  int64 `json:"rssAfterKiB"`
	// RSSPerWatcherKiB is (after − before) / watchers, after the hold.
	RSSPerWatcherKiB float64 `json:"rssPerWatcherKiB"`
	// HeapPerWatcherKiB and GoroutinesPerWatcher come from the server's
	// Go runtime metrics, where it exports them.
	HeapBefore           int64   `json:"heapBefore,omitempty"`
	HeapAfter            int64   `json:"heapAfter,omitempty"`
	HeapPerWatcherKiB    float64 `json:"heapPerWatcherKiB,omitempty"`
	GoroutinesBefore     int64   `json:"goroutinesBefore,omitempty"`
	GoroutinesAfter      int64   `json:"goroutinesAfter,omitempty"`
	GoroutinesPerWatcher float64 `json:"goroutinesPerWatcher,omitempty"`
	// IdleCPU is the server CPU used during the hold, with every watcher
	// open and nothing written.
	IdleCPU   time.Duration `json:"idleCPU"`
	ProcError string        `json:"procError,omitempty"`
	// LoadRSSPerWatcherKiB is what the watchers cost the load generator
	// itself (its RSS growth over the scenario): at 100,000 watchers it
	// decides whether the machine can run the scenario at all.
	LoadRSSPerWatcherKiB float64 `json:"loadRSSPerWatcherKiB,omitempty"`
}

// runIdle opens many watchers that receive nothing but two markers and
// measures what they cost the server in memory, and whether they stay.
func runIdle(ctx context.Context, c *config, t *target, objs *objectFactory, s *sampler, logf logFunc) (*idleResult, error) {
	rv, err := t.currentRV(ctx)
	if err != nil {
		return nil, err
	}
	self, selfErr := procfs.Read(0)
	before := s.sample(ctx)
	logf("idle: opening %d watchers (server RSS %d KiB)", c.IdleWatchers, before.RSSKiB)
	f, err := openFleet(ctx, t, fleetSpec{
		watchers: c.IdleWatchers, rv: rv, streamsPerConn: c.StreamsPerConn, concurrency: c.OpenConcurrency,
		lifetime: c.Timeout + time.Minute,
	})
	if err != nil {
		return nil, err
	}
	defer f.stop()
	res := &idleResult{Watchers: c.IdleWatchers, OpenTime: f.openTime, Hold: c.IdleHold}
	first, err := writeMarker(ctx, t, objs, f, time.Minute)
	if err != nil {
		return nil, err
	}
	res.MarkerSawAtOpen = first.Saw
	res.Connections = f.connections()
	logf("idle: %d/%d watchers live on %d connections (opened in %v); holding %v",
		first.Saw, c.IdleWatchers, res.Connections, f.openTime.Round(time.Millisecond), c.IdleHold)

	held := s.sample(ctx)
	hold := time.NewTimer(c.IdleHold)
	select {
	case <-hold.C:
	case <-ctx.Done():
		hold.Stop()
		return nil, ctx.Err()
	}
	after := s.sample(ctx)
	if selfAfter, err := procfs.Read(0); err == nil && selfErr == nil {
		res.LoadRSSPerWatcherKiB = float64(selfAfter.RSSKiB-self.RSSKiB) / float64(c.IdleWatchers)
	}
	second, err := writeMarker(ctx, t, objs, f, time.Minute)
	if err != nil {
		return nil, err
	}
	res.MarkerSawAfterHold = second.Saw
	res.Dropped = f.openFailed.Load() + f.ended.Load()
	res.Errors = f.errs.list()

	res.ProcError = after.ProcErr
	if before.ProcErr == "" && after.ProcErr == "" && len(c.processes()) > 0 {
		res.RSSBeforeKiB, res.RSSAfterKiB = before.RSSKiB, after.RSSKiB
		res.RSSPerWatcherKiB = float64(after.RSSKiB-before.RSSKiB) / float64(c.IdleWatchers)
		res.IdleCPU = after.CPU - held.CPU
	}
	if before.MetricsErr == "" && after.MetricsErr == "" {
		res.HeapBefore, res.HeapAfter = before.HeapInuse, after.HeapInuse
		res.HeapPerWatcherKiB = float64(after.HeapInuse-before.HeapInuse) / 1024 / float64(c.IdleWatchers)
		res.GoroutinesBefore, res.GoroutinesAfter = before.Goroutines, after.Goroutines
		res.GoroutinesPerWatcher = float64(after.Goroutines-before.Goroutines) / float64(c.IdleWatchers)
	}
	return res, nil
}
