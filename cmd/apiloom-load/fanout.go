package main

import (
	"context"
	"fmt"
	"time"

	"github.com/apiloom/apiloom/cmd/apiloom-load/internal/accounting"
)

// fanoutResult is the outcome of the fanout scenario.
type fanoutResult struct {
	Watchers    int           `json:"watchers"`
	Connections int           `json:"connections"`
	OpenTime    time.Duration `json:"openTime"`
	// MarkerSaw is how many watchers saw the readiness marker.
	MarkerSaw  int64       `json:"markerSaw"`
	TargetRate float64     `json:"targetRate"`
	Writer     writerStats `json:"writer"`
	// Events holds delivery, correctness and write→last-watcher latency.
	Events        accounting.Report `json:"events"`
	DrainTimedOut bool              `json:"drainTimedOut"`
	// Dropped counts watches that failed to open or ended early.
	Dropped int64    `json:"dropped"`
	Errors  []string `json:"errors,omitempty"`
	// Window is the measured span: first write until every event arrived
	// (or the drain timed out).
	Window               time.Duration   `json:"window"`
	ServerCPU            time.Duration   `json:"serverCPU"`
	ServerCPUPerProcess  []time.Duration `json:"serverCPUPerProcess,omitempty"`
	CPUPerEvent          time.Duration   `json:"cpuPerEvent"`
	LoadGenCPU           time.Duration   `json:"loadGenCPU"`
	ProcError            string          `json:"procError,omitempty"`
	ServerGoroutinesOpen int64           `json:"serverGoroutinesOpen,omitempty"`
	// Profile is the file holding a CPU profile of the server taken
	// while writing, if one was asked for.
	Profile string `json:"profile,omitempty"`
}

// runFanout opens the watchers, proves them live with a marker, then
// writes at the configured rate and accounts for every event.
func runFanout(ctx context.Context, c *config, t *target, objs *objectFactory, s *sampler, logf logFunc) (*fanoutResult, error) {
	names := make([]string, c.FanoutObjects)
	for i := range names {
		names[i] = fmt.Sprintf("load-fanout-%03d", i)
	}
	current, err := ensureObjects(ctx, t, objs, names)
	if err != nil {
		return nil, err
	}
	rv, err := t.currentRV(ctx)
	if err != nil {
		return nil, err
	}
	writes := c.fanoutWrites()
	tr := accounting.NewTracker(c.FanoutWatchers, writes)
	logf("fanout: opening %d watchers from rv %s", c.FanoutWatchers, rv)
	f, err := openFleet(ctx, t, fleetSpec{
		watchers: c.FanoutWatchers, rv: rv, streamsPerConn: c.StreamsPerConn, concurrency: c.OpenConcurrency,
		lifetime: c.Timeout + time.Minute, tracker: tr,
	})
	if err != nil {
		return nil, err
	}
	defer f.stop()
	res := &fanoutResult{Watchers: c.FanoutWatchers, OpenTime: f.openTime, TargetRate: c.FanoutRate}
	mark, err := writeMarker(ctx, t, objs, f, time.Minute)
	if err != nil {
		return nil, err
	}
	res.MarkerSaw = mark.Saw
	res.Connections = f.connections()
	logf("fanout: %d/%d watchers live on %d connections (opened in %v); writing %d updates at %.0f/s",
		mark.Saw, c.FanoutWatchers, res.Connections, f.openTime.Round(time.Millisecond), writes, c.FanoutRate)

	prof, err := newCPUProfiler(c, t)
	if err != nil {
		return nil, err
	}
	before := s.sample(ctx)
	res.ServerGoroutinesOpen = before.Goroutines
	var waitProfile func() error
	if prof != nil {
		waitProfile = prof.start(ctx, c.FanoutDuration)
	}
	res.Writer = runWriter(ctx, t, objs, current, writes, c.FanoutRate, tr, f.base)
	want := int64(res.Writer.Acknowledged) * int64(c.FanoutWatchers)
	res.DrainTimedOut = !awaitDelivered(ctx, tr, want, f, c.Drain)
	after := s.sample(ctx)

	f.stop()
	if waitProfile != nil {
		if err := waitProfile(); err != nil {
			res.Errors = append(res.Errors, err.Error())
		} else {
			res.Profile = c.ProfileOut
			logf("fanout: server CPU profile in %s", c.ProfileOut)
		}
	}
	res.Events = tr.Report()
	res.Dropped = f.openFailed.Load() + f.ended.Load()
	res.Errors = append(res.Errors, f.errs.list()...)
	res.Window = after.At.Sub(before.At)
	res.LoadGenCPU = after.SelfCPU - before.SelfCPU
	res.ProcError = after.ProcErr
	if after.ProcErr == "" && before.ProcErr == "" && len(c.processes()) > 0 {
		res.ServerCPU = after.CPU - before.CPU
		for i := range after.PerProcessCPU {
			res.ServerCPUPerProcess = append(res.ServerCPUPerProcess, after.PerProcessCPU[i]-before.PerProcessCPU[i])
		}
		if res.Events.Delivered > 0 {
			res.CPUPerEvent = res.ServerCPU / time.Duration(res.Events.Delivered)
		}
	}
	return res, nil
}

// awaitDelivered waits until the tracker has want first receipts, every
// watcher has dropped, or drain passes; it reports whether everything
// arrived.
func awaitDelivered(ctx context.Context, tr *accounting.Tracker, want int64, f *fleet, drain time.Duration) bool {
	deadline := time.NewTimer(drain)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if tr.Delivered() >= want {
			return true
		}
		if f.open() <= 0 {
			return false
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}
