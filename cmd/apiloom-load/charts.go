package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// chartRun is one result file given to charts, under the label its
// argument named (or the file's own).
type chartRun struct {
	label string
	r     *result
}

// chart is one PNG file; build returns nil when the runs hold none of its
// data, and then no file is written.
type chart struct {
	file  string
	build func([]chartRun) (*plot.Plot, error)
}

// charts are the files the charts subcommand can write.
var charts = append([]chart{
	{"throughput.png", throughputChart},
	{"list-times.png", listTimesChart},
	{"fanout-latency.png", fanoutChart},
	{"informer-sync.png", informerChart},
}, scaleCharts...)

// Size of every chart.
const chartWidth, chartHeight = 8 * vg.Inch, 5 * vg.Inch

var errChartsArgs = errors.New("apiloom-load charts: arguments are --out DIR [LABEL=]FILE.json ...")

// runCharts is the charts subcommand: it reads the result files and
// writes into --out each chart whose data they hold, naming each file
// written on w.
func runCharts(w io.Writer, args []string) error {
	fs := pflag.NewFlagSet("apiloom-load charts", pflag.ContinueOnError)
	out := fs.String("out", "", "directory to write the PNG files into (created when missing)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() == 0 {
		return errChartsArgs
	}
	var runs []chartRun
	for _, a := range fs.Args() {
		label, path, ok := strings.Cut(a, "=")
		if !ok {
			label, path = "", a
		}
		r, err := readResult(path)
		if err != nil {
			return err
		}
		if label == "" {
			label = r.Label
		}
		runs = append(runs, chartRun{label, r})
	}
	written, err := writeCharts(*out, runs)
	for _, f := range written {
		fmt.Fprintln(w, f)
	}
	return err
}

// writeCharts writes each chart with data into dir and returns the files
// written.
func writeCharts(dir string, runs []chartRun) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var written []string
	for _, c := range charts {
		p, err := c.build(runs)
		if err != nil {
			return written, fmt.Errorf("%s: %w", c.file, err)
		}
		if p == nil {
			continue
		}
		path := filepath.Join(dir, c.file)
		if err := p.Save(chartWidth, chartHeight, path); err != nil {
			return written, fmt.Errorf("%s: %w", c.file, err)
		}
		written = append(written, path)
	}
	return written, nil
}

// barSeries is one colour of a grouped bar chart: a value per group; NaN
// where the run has no figure for that group (drawn as no bar).
type barSeries struct {
	name   string
	values []float64
}

// groupedBars draws series side by side in each group; nil if no series
// has a figure.
func groupedBars(title, yLabel string, groups []string, series []barSeries) (*plot.Plot, error) {
	have, top := false, 0.0
	for _, s := range series {
		for _, v := range s.values {
			if !math.IsNaN(v) {
				have, top = true, max(top, v)
			}
		}
	}
	if !have {
		return nil, nil
	}
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = yLabel
	p.Y.Min = 0
	p.Legend.Top = true
	width := vg.Points(min(40, 240/float64(len(series))))
	for i, s := range series {
		vals := make(plotter.Values, len(s.values))
		for j, v := range s.values {
			if !math.IsNaN(v) {
				vals[j] = v
			}
		}
		b, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return nil, err
		}
		b.LineStyle.Width = 0
		b.Color = plotutil.Color(i)
		b.Offset = width * vg.Length(2*i-len(series)+1) / 2
		p.Add(b)
		p.Legend.Add(s.name, b)
	}
	p.NominalX(groups...)
	// Half a group of room on each side, and headroom for the legend.
	p.X.Min, p.X.Max = -0.5, float64(len(groups))-0.5
	p.Y.Max = 1.25 * top
	return p, nil
}

// lineSeries is one line of a line chart.
type lineSeries struct {
	name string
	xys  plotter.XYs
}

// lines draws the series, sorted by x; x on a log scale when logX.
func lines(title, xLabel, yLabel string, series []lineSeries, logX bool) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Y.Min = 0
	p.Legend.Top = true
	p.Legend.Left = true
	if logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	var vs []any
	for _, s := range series {
		xys := slices.Clone(s.xys)
		slices.SortFunc(xys, func(a, b plotter.XY) int {
			switch {
			case a.X < b.X:
				return -1
			case a.X > b.X:
				return 1
			}
			return 0
		})
		vs = append(vs, s.name, xys)
	}
	if err := plotutil.AddLinePoints(p, vs...); err != nil {
		return nil, err
	}
	return p, nil
}

// throughputChart: creates/s and patches/s of the list scenario per
// target, and raw etcd puts/s at the same concurrency (the floor) when a
// run measured them.
func throughputChart(runs []chartRun) (*plot.Plot, error) {
	groups := []string{"creates/s", "patches/s"}
	floor := slices.ContainsFunc(runs, func(run chartRun) bool { return run.r.Floor != nil })
	if floor {
		groups = append(groups, "etcd puts/s (floor)")
	}
	var series []barSeries
	for _, run := range runs {
		l, f := run.r.List, run.r.Floor
		if l == nil && f == nil {
			continue
		}
		s := barSeries{run.label, []float64{math.NaN(), math.NaN()}}
		if l != nil {
			s.values = []float64{l.CreateRate, l.UpdateRate}
		}
		if floor {
			s.values = append(s.values, math.NaN())
			if f != nil {
				s.values[2] = f.Rate
			}
		}
		series = append(series, s)
	}
	return groupedBars("Write throughput (list scenario) and raw etcd puts", "objects/s", groups, series)
}

// listTimesChart: median LIST times of each kind per target.
func listTimesChart(runs []chartRun) (*plot.Plot, error) {
	var series []barSeries
	objects := 0
	for _, run := range runs {
		if l := run.r.List; l != nil {
			objects = max(objects, l.Items)
			series = append(series, barSeries{run.label, []float64{msOf(l.RV0.Median), msOf(l.Consistent.Median), msOf(l.Paged.Median)}})
		}
	}
	return groupedBars(fmt.Sprintf("LIST of %d objects, median (lower is better)", objects), "ms",
		[]string{"RV=0", "consistent", "paged (whole traversal)"}, series)
}

// fanoutPoint is one fan-out round in a chart: its series (the target,
// and the transport when the runs used more than one) and figures.
type fanoutPoint struct {
	series   string
	watchers int
	p50, p99 float64
}

// fanoutPoints are the rounds of the runs that delivered events, and
// the names of their series in order; several is whether a series has
// more than one watcher count (so the chart has lines, not bars).
func fanoutPoints(runs []chartRun) (points []fanoutPoint, names []string, several bool) {
	transports := map[string]bool{}
	for _, run := range runs {
		for _, f := range run.r.Fanout {
			transports[f.Transport] = true
		}
	}
	counts := map[string]map[int]bool{}
	for _, run := range runs {
		for _, f := range run.r.Fanout {
			if f.Events.AllReceived.Count == 0 {
				continue
			}
			name := run.label
			if len(transports) > 1 {
				name += " " + f.Transport
			}
			if counts[name] == nil {
				names = append(names, name)
				counts[name] = map[int]bool{}
			}
			counts[name][f.Watchers] = true
			several = several || len(counts[name]) > 1
			points = append(points, fanoutPoint{name, f.Watchers, msOf(f.Events.AllReceived.P50), msOf(f.Events.AllReceived.P99)})
		}
	}
	return points, names, several
}

// fanoutChart: write→all-received p50 and p99 per target (and
// transport, when the runs used more than one); latency against watchers
// as lines when a series has several watcher counts, from the rounds of
// one file or from files given under the same label.
func fanoutChart(runs []chartRun) (*plot.Plot, error) {
	points, names, several := fanoutPoints(runs)
	if len(points) == 0 {
		return nil, nil
	}
	if several {
		series := make([]lineSeries, 0, 2*len(names))
		for _, n := range names {
			p50, p99 := lineSeries{name: n + " p50"}, lineSeries{name: n + " p99"}
			for _, pt := range points {
				if pt.series == n {
					p50.xys = append(p50.xys, plotter.XY{X: float64(pt.watchers), Y: pt.p50})
					p99.xys = append(p99.xys, plotter.XY{X: float64(pt.watchers), Y: pt.p99})
				}
			}
			series = append(series, p50, p99)
		}
		return lines("Watch fan-out: write → all watchers received", "watchers", "ms", series, true)
	}
	series := make([]barSeries, 0, len(points))
	watchers := 0
	for _, pt := range points {
		watchers = max(watchers, pt.watchers)
		series = append(series, barSeries{pt.series, []float64{pt.p50, pt.p99}})
	}
	return groupedBars(fmt.Sprintf("Watch fan-out, %d watchers: write → all received (lower is better)", watchers), "ms",
		[]string{"p50", "p99"}, series)
}

// informerChart: median informer sync time per target, format and mode;
// against objects synced as lines when a series has several object counts.
func informerChart(runs []chartRun) (*plot.Plot, error) {
	type point struct {
		series, group string
		items         int
		seconds       float64
	}
	var points []point
	for _, run := range runs {
		if run.r.Informer == nil {
			continue
		}
		for _, x := range run.r.Informer.Rounds {
			if x.Error != "" || len(x.All) == 0 {
				continue
			}
			group := x.Format + " " + x.mode()
			points = append(points, point{run.label + " " + group, group, x.Items, x.Median.Seconds()})
		}
	}
	if len(points) == 0 {
		return nil, nil
	}
	counts := map[string]map[int]bool{}
	several := false
	for _, pt := range points {
		if counts[pt.series] == nil {
			counts[pt.series] = map[int]bool{}
		}
		counts[pt.series][pt.items] = true
		several = several || len(counts[pt.series]) > 1
	}
	if several {
		var series []lineSeries
		index := map[string]int{}
		for _, pt := range points {
			i, ok := index[pt.series]
			if !ok {
				i = len(series)
				index[pt.series] = i
				series = append(series, lineSeries{name: pt.series})
			}
			series[i].xys = append(series[i].xys, plotter.XY{X: float64(pt.items), Y: pt.seconds})
		}
		return lines("Informer sync (start → HasSynced), median", "objects", "s", series, true)
	}
	// One object count per series: bars, a group per format and mode, a
	// colour per target.
	var groups []string
	for _, pt := range points {
		if !slices.Contains(groups, pt.group) {
			groups = append(groups, pt.group)
		}
	}
	var series []barSeries
	items := 0
	for _, run := range runs {
		if run.r.Informer == nil {
			continue
		}
		s := barSeries{run.label, make([]float64, len(groups))}
		for i := range s.values {
			s.values[i] = math.NaN()
		}
		for _, x := range run.r.Informer.Rounds {
			if x.Error == "" && len(x.All) > 0 {
				s.values[slices.Index(groups, x.Format+" "+x.mode())] = x.Median.Seconds()
				items = max(items, x.Items)
			}
		}
		series = append(series, s)
	}
	return groupedBars(fmt.Sprintf("Informer sync of %d objects (start → HasSynced), median (lower is better)", items), "s", groups, series)
}
