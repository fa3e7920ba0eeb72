package main

import (
	"fmt"
	"slices"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// scaleFigure is one figure of a scale step, by name; ok is false where
// the step has none.
type scaleFigure struct {
	name, format string
	value        func(*scaleStep) (v float64, ok bool)
}

// listFigure is a figure of the step's LISTs, absent where they failed.
func listFigure(name, format string, f func(*listResult) float64) scaleFigure {
	return scaleFigure{name, format, func(st *scaleStep) (float64, bool) {
		if st.List == nil || st.List.Items == 0 {
			return 0, false
		}
		return f(st.List), true
	}}
}

// getFigure is a figure of the step's GETs.
func getFigure(name string, f func(*getKinds) time.Duration) scaleFigure {
	return scaleFigure{name, "%.2f", func(st *scaleStep) (float64, bool) {
		g := st.List.gets()
		if g == nil {
			return 0, false
		}
		return msOf(f(g)), true
	}}
}

// restartFigure is a figure of the step's restart, absent where it
// failed or none was made.
func restartFigure(name, format string, f func(*scaleRestartTimes) float64) scaleFigure {
	return scaleFigure{name, format, func(st *scaleStep) (float64, bool) {
		if st.Restart == nil || st.Restart.Error != "" {
			return 0, false
		}
		return f(st.Restart), true
	}}
}

func mib(kib int64) float64 { return float64(kib) / 1024 }

// The figures of every step, in the order of the comparison table.
var (
	scaleCreates = scaleFigure{"creates/s", "%.0f", func(st *scaleStep) (float64, bool) {
		if st.List == nil || st.List.Created == 0 {
			return 0, false
		}
		return st.List.CreateRate, true
	}}
	scaleRSS  = scaleFigure{"RSS MiB", "%.1f", func(st *scaleStep) (float64, bool) { return mib(st.Memory.RSSKiB), st.Memory.RSSKiB > 0 }}
	scaleHeap = scaleFigure{"heap in use MiB", "%.1f", func(st *scaleStep) (float64, bool) {
		return float64(st.Memory.HeapInuseBytes) / (1 << 20), st.Memory.HeapInuseBytes > 0
	}}
	scaleEtcdDB = scaleFigure{"etcd db MiB", "%.1f", func(st *scaleStep) (float64, bool) {
		return float64(st.EtcdDBBytes) / (1 << 20), st.EtcdDBBytes >= 0
	}}
	scaleListRV0        = listFigure("LIST RV=0 median ms", "%.1f", func(l *listResult) float64 { return msOf(l.RV0.Median) })
	scaleListConsistent = listFigure("LIST consistent median ms", "%.1f", func(l *listResult) float64 { return msOf(l.Consistent.Median) })
	scaleListPaged      = listFigure("LIST paged median ms", "%.1f", func(l *listResult) float64 { return msOf(l.Paged.Median) })
	scaleGetConsistent  = getFigure("GET consistent p50 ms", func(g *getKinds) time.Duration { return g.Consistent.Latency.P50 })
	scaleGetRV0         = getFigure("GET RV=0 p50 ms", func(g *getKinds) time.Duration { return g.RV0.Latency.P50 })
	scaleReadyz         = restartFigure("restart → /readyz s", "%.2f", func(r *scaleRestartTimes) float64 { return r.ReadyzTime.Seconds() })
	scaleReady          = restartFigure("restart → full LIST RV=0 s", "%.2f", func(r *scaleRestartTimes) float64 { return r.ReadyTime.Seconds() })
	scaleRestartRSS     = restartFigure("RSS after restart MiB", "%.1f", func(r *scaleRestartTimes) float64 { return mib(r.Memory.RSSKiB) })
)

// informerFigures are the sync times of the informer settings the steps
// hold, in the order they first appear.
func informerFigures(steps [][]scaleStep) []scaleFigure {
	type key struct {
		format    string
		watchList bool
	}
	var keys []key
	for _, ss := range steps {
		for _, st := range ss {
			if st.Informer == nil {
				continue
			}
			for _, r := range st.Informer.Rounds {
				if k := (key{r.Format, r.WatchList}); !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
			}
		}
	}
	out := make([]scaleFigure, 0, len(keys))
	for _, k := range keys {
		name := (&informerRound{Format: k.format, WatchList: k.watchList}).mode()
		out = append(out, scaleFigure{"informer " + k.format + " " + name + " sync s", "%.2f", func(st *scaleStep) (float64, bool) {
			if st.Informer == nil {
				return 0, false
			}
			for _, r := range st.Informer.Rounds {
				if r.Format == k.format && r.WatchList == k.watchList && r.Error == "" && len(r.All) > 0 {
					return r.Median.Seconds(), true
				}
			}
			return 0, false
		}})
	}
	return out
}

// fanoutFigures are the write→all latencies of the step's last fan-out
// round (the most watchers, as --fanout-watchers usually go).
func fanoutFigures() []scaleFigure {
	last := func(f func(*fanoutResult) time.Duration) func(*scaleStep) (float64, bool) {
		return func(st *scaleStep) (float64, bool) {
			if len(st.Fanout) == 0 || st.Fanout[len(st.Fanout)-1].Events.AllReceived.Count == 0 {
				return 0, false
			}
			return msOf(f(&st.Fanout[len(st.Fanout)-1])), true
		}
	}
	return []scaleFigure{
		{"fanout write→all p50 ms", "%.1f", last(func(f *fanoutResult) time.Duration { return f.Events.AllReceived.P50 })},
		{"fanout write→all p99 ms", "%.1f", last(func(f *fanoutResult) time.Duration { return f.Events.AllReceived.P99 })},
	}
}

// scaleSteps are each run's steps (nil for a run without the scenario).
func scaleSteps(runs []*result) [][]scaleStep {
	out := make([][]scaleStep, len(runs))
	for i, r := range runs {
		if r.Scale != nil {
			out[i] = r.Scale.Steps
		}
	}
	return out
}

// scaleCounts are the object counts of the runs' steps, ascending.
func scaleCounts(steps [][]scaleStep) []int {
	var counts []int
	for _, ss := range steps {
		for _, st := range ss {
			if !slices.Contains(counts, st.Objects) {
				counts = append(counts, st.Objects)
			}
		}
	}
	slices.Sort(counts)
	return counts
}

// stepAt is the step of ss that reached objects.
func stepAt(ss []scaleStep, objects int) (*scaleStep, bool) {
	for i := range ss {
		if ss[i].Objects == objects {
			return &ss[i], true
		}
	}
	return nil, false
}

// allScaleFigures are the figures of the comparison table.
func allScaleFigures(steps [][]scaleStep) []scaleFigure {
	return slices.Concat([]scaleFigure{scaleCreates, scaleRSS, scaleHeap, scaleEtcdDB, scaleListRV0, scaleListConsistent, scaleListPaged,
		scaleGetConsistent, scaleGetRV0}, informerFigures(steps), fanoutFigures(), []scaleFigure{scaleReadyz, scaleReady, scaleRestartRSS})
}

// scaleMetrics are the comparison rows of the scale steps: each figure at
// each object count, a column per target.
func scaleMetrics(runs []*result) []metric {
	steps := scaleSteps(runs)
	var out []metric
	for _, n := range scaleCounts(steps) {
		for _, f := range allScaleFigures(steps) {
			out = append(out, metric{fmt.Sprintf("scale %d %s", n, f.name), func(r *result) (float64, bool) {
				if r.Scale == nil {
					return 0, false
				}
				st, ok := stepAt(r.Scale.Steps, n)
				if !ok {
					return 0, false
				}
				return f.value(st)
			}, f.format})
		}
	}
	return out
}

// scaleChart draws figures against object count (log scale), a line per
// target and figure; nil when no run has a point.
func scaleChart(title, yLabel string, figures func([][]scaleStep) []scaleFigure) func([]chartRun) (*plot.Plot, error) {
	return func(runs []chartRun) (*plot.Plot, error) {
		steps := make([][]scaleStep, len(runs))
		for i, run := range runs {
			if run.r.Scale != nil {
				steps[i] = run.r.Scale.Steps
			}
		}
		figs := figures(steps)
		var series []lineSeries
		for i, run := range runs {
			for _, f := range figs {
				s := lineSeries{name: run.label}
				if len(figs) > 1 {
					s.name += " " + f.name
				}
				for j := range steps[i] {
					if v, ok := f.value(&steps[i][j]); ok {
						s.xys = append(s.xys, plotter.XY{X: float64(steps[i][j].Objects), Y: v})
					}
				}
				if len(s.xys) > 0 {
					series = append(series, s)
				}
			}
		}
		if len(series) == 0 {
			return nil, nil
		}
		return lines(title, "objects", yLabel, series, true)
	}
}

// fixed lists figures for scaleChart.
func fixed(fs ...scaleFigure) func([][]scaleStep) []scaleFigure {
	return func([][]scaleStep) []scaleFigure { return fs }
}

// scaleCharts are the scale scenario's charts, each against object count.
var scaleCharts = []chart{
	{"scale-rss.png", scaleChart("Server RSS after the creates (all its processes)", "MiB", fixed(scaleRSS))},
	{"scale-heap.png", scaleChart("Go heap in use after the creates (/metrics)", "MiB", fixed(scaleHeap))},
	{"scale-etcd-db.png", scaleChart("etcd database file", "MiB", fixed(scaleEtcdDB))},
	{"scale-creates.png", scaleChart("Creates/s of each step's new objects", "creates/s", fixed(scaleCreates))},
	{"scale-list.png", scaleChart("LIST, median (paged: the whole traversal)", "ms", fixed(scaleListRV0, scaleListConsistent, scaleListPaged))},
	{"scale-get.png", scaleChart("GET by name, p50", "ms", fixed(scaleGetConsistent, scaleGetRV0))},
	{"scale-informer-sync.png", scaleChart("Informer sync (start → HasSynced), median", "s", informerFigures)},
	{"scale-fanout.png", scaleChart("Watch fan-out: write → all watchers received", "ms", func([][]scaleStep) []scaleFigure { return fanoutFigures() })},
	{"scale-restart.png", scaleChart("Restart: start → every object served by LIST RV=0", "s", fixed(scaleReady))},
}
