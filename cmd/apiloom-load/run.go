package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"
)

// logFunc reports progress.
type logFunc func(format string, args ...any)

func stderrLog(format string, args ...any) {
	fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05 ")+format+"\n", args...)
}

var knownScenarios = map[string]bool{"baseline": true, "fanout": true, "idle": true, "list": true, "informer": true, "stalled": true, "rapidreset": true, "floor": true, "admission": true, "scale": true}

// run runs the named scenarios in order against the target. A scenario
// that fails is recorded in the result and the others still run; only a
// target that cannot be reached at all is an error.
func run(ctx context.Context, c *config, scenarios []string, logf logFunc) (*result, error) {
	if len(scenarios) == 0 {
		scenarios = []string{"baseline", "fanout", "idle", "list", "informer"}
	}
	for _, s := range scenarios {
		if !knownScenarios[s] {
			return nil, fmt.Errorf("%w: unknown scenario %q", errConfig, s)
		}
	}
	// Before anything connects: the floor needs an etcd to put into.
	if slices.Contains(scenarios, "floor") {
		if err := checkFloorEndpoint(c.FloorEtcd); err != nil {
			return nil, err
		}
	}
	t, err := newTarget(c)
	if err != nil {
		return nil, err
	}
	objs, err := newObjectFactory(c)
	if err != nil {
		return nil, err
	}
	if err := t.ensureNamespace(ctx); err != nil {
		return nil, err
	}
	if _, err := t.currentRV(ctx); err != nil {
		return nil, err
	}
	s := newSampler(t, c.processes())
	r := &result{Label: c.Label, Server: t.cfg.Host, Resource: t.gvr.String(), PIDs: c.PIDs, PIDTrees: c.PIDTrees, ProcessNames: c.PIDNames, Started: time.Now()}
	record := func(name, why string) {
		if r.Failures == nil {
			r.Failures = map[string]string{}
		}
		r.Failures[name] = why
	}
	fail := func(name string, err error) {
		record(name, err.Error())
		logf("%s: FAILED: %v", name, err)
	}
	for _, name := range scenarios {
		if ctx.Err() != nil {
			fail(name, ctx.Err())
			continue
		}
		var err error
		switch name {
		case "baseline":
			r.Baseline, err = runBaseline(ctx, c)
		case "fanout":
			// A round that fails is recorded under its own name and the
			// others still run.
			for _, round := range c.fanoutRounds() {
				if ctx.Err() != nil {
					fail(round.name(), ctx.Err())
					continue
				}
				f, err := runFanout(ctx, c, t, objs, s, round, logf)
				if f != nil {
					r.Fanout = append(r.Fanout, *f)
				}
				if err != nil {
					fail(round.name(), err)
				}
			}
		case "floor":
			r.Floor, err = runFloor(ctx, c, t, objs, s, logf)
		case "idle":
			r.Idle, err = runIdle(ctx, c, t, objs, s, logf)
		case "list":
			r.List, err = runList(ctx, c, t, objs, s, logf)
		case "informer":
			// The list scenario's objects, if it made them all.
			present := 0
			if r.List != nil && r.List.CreateError == "" {
				present = r.List.Objects
			}
			r.Informer, err = runInformer(ctx, c, t, objs, s, present, logf)
			if r.Informer != nil {
				for _, round := range r.Informer.Rounds {
					if round.Error != "" && !round.NotServed {
						record(round.name(), round.Error) // logged as it happened
					}
				}
			}
		case "stalled":
			r.Stalled, err = runStalled(ctx, c, t, objs, s, logf)
		case "admission":
			r.Admission, err = runAdmission(ctx, c, t, objs, s, logf)
			if r.Admission != nil {
				for _, round := range r.Admission.Rounds {
					if round.Error != "" {
						record("admission "+round.Name, round.Error) // logged as it happened
					}
				}
			}
		case "scale":
			r.Scale, t, s, err = runScale(ctx, c, t, objs, s, logf)
			if r.Scale != nil {
				for _, st := range r.Scale.Steps {
					for part, why := range st.Errors {
						record(st.name()+" "+part, why) // logged as it happened
					}
				}
			}
		case "rapidreset":
			r.RapidReset, err = runRapidReset(ctx, c, t, s, logf)
		}
		if err != nil {
			fail(name, err)
		}
	}
	return r, nil
}
