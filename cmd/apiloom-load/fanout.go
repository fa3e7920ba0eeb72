package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/apiloom/apiloom/cmd/apiloom-load/internal/accounting"
)

// Watch transports of the fan-out rounds.
const (
	// transportH2 multiplexes --streams-per-conn watches on each HTTP/2
	// connection, as client-go does by default.
	transportH2 = "h2"
	// transportHTTP1 gives each watch a TLS connection of its own, as
	// client-go does with HTTP/2 disabled (DISABLE_HTTP2, or NextProtos
	// http/1.1).
	transportHTTP1 = "http1"
)

// fanoutRound is one fan-out round's setting.
type fanoutRound struct {
	watchers  int
	transport string
}

// name identifies the round in logs, failures and table rows.
func (r fanoutRound) name() string { return fmt.Sprintf("fanout %d %s", r.watchers, r.transport) }

// fanoutRounds are the rounds the flags ask for: each watcher count, in
// the order given, over each transport, so that the transports at one
// count run next to each other.
func (c *config) fanoutRounds() []fanoutRound {
	var out []fanoutRound
	for _, n := range c.FanoutWatchers {
		for _, tr := range c.FanoutTransports {
			out = append(out, fanoutRound{n, tr})
		}
	}
	return out
}

// profileOut is where round's CPU profile goes: --profile-out, with the
// round's watchers and transport before the extension when there are
// several rounds, so that each keeps its own.
func (c *config) profileOut(round fanoutRound) string {
	if len(c.fanoutRounds()) == 1 {
		return c.ProfileOut
	}
	ext := filepath.Ext(c.ProfileOut)
	return fmt.Sprintf("%s-%d-%s%s", strings.TrimSuffix(c.ProfileOut, ext), round.watchers, round.transport, ext)
}

// fanoutResult is the outcome of one fan-out round.
type fanoutResult struct {
	Watchers int `json:"watchers"`
	// Transport is transportH2 or transportHTTP1 (files from before
	// rounds had only h2 and name none; readResult fills it in).
	Transport   string        `json:"transport"`
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

// round is the result's setting.
func (f *fanoutResult) round() fanoutRound { return fanoutRound{f.Watchers, f.Transport} }

// runFanout runs one fan-out round: it opens the watchers, proves them
// live with a marker, then writes at the configured rate and accounts for
// every event.
func runFanout(ctx context.Context, c *config, t *target, objs *objectFactory, s *sampler, round fanoutRound, logf logFunc) (*fanoutResult, error) {
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
	tr := accounting.NewTracker(round.watchers, writes)
	logf("%s: opening %d watchers over %s from rv %s", round.name(), round.watchers, round.transport, rv)
	f, err := openFleet(ctx, t, fleetSpec{
		watchers: round.watchers, transport: round.transport, rv: rv, streamsPerConn: c.StreamsPerConn, concurrency: c.OpenConcurrency,
		lifetime: c.Timeout + time.Minute, tracker: tr,
	})
	if err != nil {
		return nil, err
	}
	defer f.stop()
	res := &fanoutResult{Watchers: round.watchers, Transport: round.transport, OpenTime: f.openTime, TargetRate: c.FanoutRate}
	mark, err := writeMarker(ctx, t, objs, f, time.Minute)
	if err != nil {
		return nil, err
	}
	res.MarkerSaw = mark.Saw
	res.Connections = f.connections()
	logf("%s: %d/%d watchers live on %d connections (opened in %v); writing %d updates at %.0f/s",
		round.name(), mark.Saw, round.watchers, res.Connections, f.openTime.Round(time.Millisecond), writes, c.FanoutRate)

	prof, err := newCPUProfiler(c, t, c.profileOut(round))
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
	want := int64(res.Writer.Acknowledged) * int64(round.watchers)
	res.DrainTimedOut = !awaitDelivered(ctx, tr, want, f, c.Drain)
	after := s.sample(ctx)

	f.stop()
	if waitProfile != nil {
		if err := waitProfile(); err != nil {
			res.Errors = append(res.Errors, err.Error())
		} else {
			res.Profile = c.profileOut(round)
			logf("%s: server CPU profile in %s", round.name(), res.Profile)
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
