package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// metric is one row of the comparison table.
type metric struct {
	name string
	// value extracts the figure; ok is false where the run has none.
	value func(*result) (v float64, ok bool)
	// format renders it.
	format string
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func usOf(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func idleMetric(name, format string, f func(*idleResult) float64) metric {
	return scenarioMetric(name, format, func(r *result) *idleResult { return r.Idle }, f)
}

func listMetric(name, format string, f func(*listResult) float64) metric {
	return scenarioMetric(name, format, func(r *result) *listResult { return r.List }, f)
}

// identityMetric is a LIST time without gzip, for runs that also
// timed them with it.
func identityMetric(name string, f func(*listKinds) time.Duration) metric {
	return scenarioMetric(name, "%.1f", func(r *result) *listKinds {
		if r.List == nil {
			return nil
		}
		return r.List.Identity
	}, func(k *listKinds) float64 { return msOf(f(k)) })
}

// getMetric is a figure of the list scenario's GETs, for runs that timed
// them.
func getMetric(name, format string, f func(*getKinds) float64) metric {
	return scenarioMetric(name, format, func(r *result) *getKinds {
		if r.List == nil {
			return nil
		}
		return r.List.Gets
	}, f)
}

// scenarioMetric is a figure of one scenario's result, absent from runs
// without that scenario (of returns nil).
func scenarioMetric[T any](name, format string, of func(*result) *T, f func(*T) float64) metric {
	return metric{name, func(r *result) (float64, bool) {
		v := of(r)
		if v == nil {
			return 0, false
		}
		return f(v), true
	}, format}
}

func stalledMetric(name, format string, f func(*stalledResult) float64) metric {
	return scenarioMetric(name, format, func(r *result) *stalledResult { return r.Stalled }, f)
}

func rapidResetMetric(name, format string, f func(*rapidResetResult) float64) metric {
	return scenarioMetric(name, format, func(r *result) *rapidResetResult { return r.RapidReset }, f)
}

func floorMetric(name, format string, f func(*floorResult) float64) metric {
	return scenarioMetric(name, format, func(r *result) *floorResult { return r.Floor }, f)
}

// createsOverFloor is the list scenario's create throughput as a fraction
// of raw etcd puts at the same concurrency in the same run: how close the
// server comes to its storage's bound. Runs at different concurrencies
// have no ratio.
func createsOverFloor(r *result) (float64, bool) {
	if r.List == nil || r.Floor == nil || r.Floor.Rate == 0 || r.List.Created == 0 || r.Floor.Workers != r.List.Creators {
		return 0, false
	}
	return r.List.CreateRate / r.Floor.Rate, true
}

func baselineMetric(name, format string, f func(*baselineResult) float64) metric {
	return scenarioMetric(name, format, func(r *result) *baselineResult { return r.Baseline }, f)
}

// comparisonMetrics are the rows of the side-by-side table.
var comparisonMetrics = []metric{
	idleMetric("idle watchers", "%.0f", func(i *idleResult) float64 { return float64(i.Watchers) }),
	idleMetric("idle still delivering after hold", "%.0f", func(i *idleResult) float64 { return float64(i.MarkerSawAfterHold) }),
	idleMetric("idle open time s", "%.2f", func(i *idleResult) float64 { return i.OpenTime.Seconds() }),
	idleMetric("idle RSS before MiB", "%.1f", func(i *idleResult) float64 { return float64(i.RSSBeforeKiB) / 1024 }),
	idleMetric("idle RSS after MiB", "%.1f", func(i *idleResult) float64 { return float64(i.RSSAfterKiB) / 1024 }),
	idleMetric("idle RSS KiB/watcher", "%.1f", func(i *idleResult) float64 { return i.RSSPerWatcherKiB }),
	idleMetric("idle heap KiB/watcher", "%.1f", func(i *idleResult) float64 { return i.HeapPerWatcherKiB }),
	idleMetric("idle goroutines/watcher", "%.2f", func(i *idleResult) float64 { return i.GoroutinesPerWatcher }),
	idleMetric("idle server CPU s during hold", "%.2f", func(i *idleResult) float64 { return i.IdleCPU.Seconds() }),
	idleMetric("idle load generator RSS KiB/watcher", "%.1f", func(i *idleResult) float64 { return i.LoadRSSPerWatcherKiB }),
	listMetric("list items", "%.0f", func(l *listResult) float64 { return float64(l.Items) }),
	listMetric("list creates/s", "%.0f", func(l *listResult) float64 { return l.CreateRate }),
	listMetric("list updates/s", "%.0f", func(l *listResult) float64 { return l.UpdateRate }),
	listMetric("list RV=0 median ms", "%.1f", func(l *listResult) float64 { return msOf(l.RV0.Median) }),
	listMetric("list consistent median ms", "%.1f", func(l *listResult) float64 { return msOf(l.Consistent.Median) }),
	listMetric("list paged median ms (whole traversal)", "%.1f", func(l *listResult) float64 { return msOf(l.Paged.Median) }),
	identityMetric("list RV=0 median ms, no gzip", func(l *listKinds) time.Duration { return l.RV0.Median }),
	identityMetric("list consistent median ms, no gzip", func(l *listKinds) time.Duration { return l.Consistent.Median }),
	identityMetric("list paged median ms, no gzip", func(l *listKinds) time.Duration { return l.Paged.Median }),
	listMetric("list paged pages", "%.0f", func(l *listResult) float64 { return float64(l.Pages) }),
	listMetric("list create server CPU µs/create", "%.0f", func(l *listResult) float64 {
		if l.Created == 0 {
			return 0
		}
		return usOf(l.CreateCPU.Total) / float64(l.Created)
	}),
	getMetric("list GET consistent p50 ms", "%.2f", func(g *getKinds) float64 { return msOf(g.Consistent.Latency.P50) }),
	getMetric("list GET consistent p99 ms", "%.2f", func(g *getKinds) float64 { return msOf(g.Consistent.Latency.P99) }),
	getMetric("list GET consistent server CPU µs/GET", "%.0f", func(g *getKinds) float64 { return usOf(g.Consistent.cpuPerGet()) }),
	getMetric("list GET RV=0 p50 ms", "%.2f", func(g *getKinds) float64 { return msOf(g.RV0.Latency.P50) }),
	getMetric("list GET RV=0 p99 ms", "%.2f", func(g *getKinds) float64 { return msOf(g.RV0.Latency.P99) }),
	getMetric("list GET RV=0 server CPU µs/GET", "%.0f", func(g *getKinds) float64 { return usOf(g.RV0.cpuPerGet()) }),
	floorMetric("floor etcd puts/s", "%.0f", func(f *floorResult) float64 { return f.Rate }),
	floorMetric("floor put p50 ms", "%.2f", func(f *floorResult) float64 { return msOf(f.Latency.P50) }),
	floorMetric("floor put p99 ms", "%.2f", func(f *floorResult) float64 { return msOf(f.Latency.P99) }),
	floorMetric("floor value bytes", "%.0f", func(f *floorResult) float64 { return float64(f.ValueBytes) }),
	floorMetric("floor server CPU µs/put", "%.0f", func(f *floorResult) float64 {
		if f.Puts == 0 {
			return 0
		}
		return usOf(f.CPU.Total) / float64(f.Puts)
	}),
	{"list creates/s ÷ floor puts/s", createsOverFloor, "%.2f"},
	stalledMetric("stalled watchers opened", "%.0f", func(s *stalledResult) float64 { return float64(s.Opened) }),
	stalledMetric("stalled RSS growth MiB (peak)", "%.1f", func(s *stalledResult) float64 { return float64(s.RSSPeakKiB-s.RSSBeforeKiB) / 1024 }),
	stalledMetric("stalled RSS KiB/watcher (peak)", "%.1f", func(s *stalledResult) float64 { return s.RSSPerWatcherKiB }),
	stalledMetric("stalled ended by the server", "%.0f", func(s *stalledResult) float64 { return float64(s.Ended) }),
	rapidResetMetric("rapidreset streams opened", "%.0f", func(r *rapidResetResult) float64 { return float64(r.StreamsOpened) }),
	rapidResetMetric("rapidreset connection closed after s", "%.2f", func(r *rapidResetResult) float64 { return r.ClosedAfter.Seconds() }),
	rapidResetMetric("rapidreset healthy p50 before ms", "%.2f", func(r *rapidResetResult) float64 { return msOf(r.HealthyBefore.P50) }),
	rapidResetMetric("rapidreset healthy p50 during ms", "%.2f", func(r *rapidResetResult) float64 { return msOf(r.HealthyDuring.P50) }),
	rapidResetMetric("rapidreset healthy p99 during ms", "%.2f", func(r *rapidResetResult) float64 { return msOf(r.HealthyDuring.P99) }),
	rapidResetMetric("rapidreset server CPU s", "%.2f", func(r *rapidResetResult) float64 { return r.ServerCPU.Seconds() }),
	baselineMetric("baseline loopback write µs", "%.2f", func(b *baselineResult) float64 { return usOf(b.LoopbackWrite) }),
	baselineMetric("baseline TLS write µs", "%.2f", func(b *baselineResult) float64 { return usOf(b.TLSWrite) }),
	baselineMetric("baseline json encode µs", "%.2f", func(b *baselineResult) float64 { return usOf(b.JSONEncode) }),
}

var errCompareArgs = errors.New("apiloom-load compare: arguments are FILE.json ...")

// runCompare prints the runs side by side, with each later run's figures
// also as a ratio to the first run's.
func runCompare(w io.Writer, paths []string) error {
	if len(paths) == 0 {
		return errCompareArgs
	}
	runs := make([]*result, 0, len(paths))
	for _, p := range paths {
		r, err := readResult(p)
		if err != nil {
			return err
		}
		runs = append(runs, r)
	}
	compareTable(w, runs)
	for _, r := range runs {
		for _, v := range r.violations() {
			fmt.Fprintf(w, "! %s: %s\n", r.Label, v)
		}
	}
	return nil
}

// compareTable writes the metrics table for runs; the first run is the
// reference for the ratio columns.
func compareTable(w io.Writer, runs []*result) {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	defer tw.Flush()
	// Names are padded to one width so that they read left-aligned in a
	// right-aligned table.
	width := len("metric")
	metrics := slices.Concat(fanoutMetrics(runs), comparisonMetrics, informerMetrics(runs), admissionMetrics(runs), scaleMetrics(runs))
	for _, m := range metrics {
		width = max(width, len([]rune(m.name)))
	}
	pad := func(s string) string { return s + strings.Repeat(" ", width-len([]rune(s))) }
	head := []string{pad("metric")}
	for _, r := range runs {
		head = append(head, r.Label)
	}
	for _, r := range runs[1:] {
		head = append(head, r.Label+"/"+runs[0].Label)
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, m := range metrics {
		cells := []string{pad(m.name)}
		ref, refOK := m.value(runs[0])
		have := false
		for _, r := range runs {
			v, ok := m.value(r)
			if !ok {
				cells = append(cells, "-")
				continue
			}
			have = true
			cells = append(cells, fmt.Sprintf(m.format, v))
		}
		if !have {
			continue
		}
		for _, r := range runs[1:] {
			v, ok := m.value(r)
			if !ok || !refOK || ref == 0 {
				cells = append(cells, "-")
				continue
			}
			cells = append(cells, fmt.Sprintf("%.2f", v/ref))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
}
