package main

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot"

	"github.com/apiloom/apiloom/cmd/apiloom-load/internal/accounting"
)

// syntheticRuns are two targets with list and informer figures; apiloom
// has fanout runs at two watcher counts (two files under one label), the
// peer none.
func syntheticRuns() []chartRun {
	list := func(scale float64) *listResult {
		return &listResult{Items: 2000, CreateRate: 3000 / scale, UpdateRate: 2500 / scale,
			listKinds: listKinds{RV0: listTimes{Median: time.Duration(scale * 10e6)}, Consistent: listTimes{Median: time.Duration(scale * 11e6)},
				Paged: listTimes{Median: time.Duration(scale * 20e6)}}}
	}
	fanout := func(watchers int, p99 time.Duration) []fanoutResult {
		return []fanoutResult{{Watchers: watchers, Transport: transportH2, Events: accounting.Report{AllReceived: accounting.Latencies{Count: 10, P50: p99 / 3, P99: p99}}}}
	}
	informer := func(scale float64, counts ...int) *informerResult {
		in := &informerResult{Repeats: 1}
		for _, n := range counts {
			for _, wl := range []bool{false, true} {
				in.Rounds = append(in.Rounds, informerRound{Objects: n, Items: n, Format: formatJSON, WatchList: wl,
					Median: time.Duration(scale * float64(n) * 1e5), All: []time.Duration{1}})
			}
			in.Rounds = append(in.Rounds, informerRound{Objects: n, Format: formatCBOR, Error: "no CBOR"})
		}
		return in
	}
	return []chartRun{
		{"apiloom", &result{List: list(1), Fanout: fanout(100, 5*time.Millisecond), Informer: informer(1, 2000)}},
		{"apiloom", &result{Fanout: fanout(1000, 20*time.Millisecond)}},
		{"kube-apiserver", &result{List: list(4), Informer: informer(2, 2000)}},
	}
}

// TestChartsWritten: every chart with data is a PNG that decodes; a chart
// without data (no run has informer rounds that succeeded) is not written.
func TestChartsWritten(t *testing.T) {
	dir := t.TempDir()
	runs := syntheticRuns()
	written, err := writeCharts(dir, runs)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"throughput.png", "list-times.png", "fanout-latency.png", "informer-sync.png"}
	checkPNGs(t, dir, written, want)

	// Without fanout figures and with only failed informer rounds (at two
	// object counts, which would make lines), those two charts are left
	// out.
	dir2 := t.TempDir()
	runs[0].r.Informer.Rounds = append(runs[0].r.Informer.Rounds, informerRound{Objects: 10000, Items: 10000, Format: formatJSON, Median: time.Second, All: []time.Duration{1}})
	for _, r := range runs {
		r.r.Fanout = nil
		if r.r.Informer != nil {
			for i := range r.r.Informer.Rounds {
				r.r.Informer.Rounds[i].Error = "failed"
			}
		}
	}
	written, err = writeCharts(dir2, runs)
	if err != nil {
		t.Fatal(err)
	}
	checkPNGs(t, dir2, written, []string{"throughput.png", "list-times.png"})
	for _, f := range []string{"fanout-latency.png", "informer-sync.png"} {
		if _, err := os.Stat(filepath.Join(dir2, f)); !os.IsNotExist(err) {
			t.Errorf("%s written without data (stat: %v)", f, err)
		}
	}
}

// TestChartsLines: object counts and watcher counts that vary within a
// label give line charts, which render too.
func TestChartsLines(t *testing.T) {
	runs := syntheticRuns()
	runs[0].r.Informer.Rounds = append(runs[0].r.Informer.Rounds, informerRound{Objects: 10000, Items: 10000, Format: formatJSON, Median: time.Second, All: []time.Duration{1}})
	for _, build := range []func([]chartRun) (*plot.Plot, error){fanoutChart, informerChart} {
		p, err := build(runs)
		if err != nil || p == nil {
			t.Fatalf("chart: %v, %v", p, err)
		}
		if p.X.Label.Text == "" {
			t.Error("a line chart names its x axis; this looks like bars")
		}
	}
}

// TestRunChartsArgs: labels come from LABEL=FILE or the file, and the
// written files are named on the output.
func TestRunChartsArgs(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.json")
	r := &result{Label: "from-file", List: &listResult{Items: 10, CreateRate: 5, UpdateRate: 4}}
	if err := r.write(path); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := runCharts(&out, []string{"--out", filepath.Join(dir, "charts"), "mine=" + path, path}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), filepath.Join(dir, "charts", "throughput.png")) {
		t.Errorf("output %q", out.String())
	}
	if err := runCharts(&out, []string{path}); err == nil {
		t.Error("charts without --out succeeded")
	}
}

func checkPNGs(t *testing.T, dir string, written, want []string) {
	t.Helper()
	var names []string
	for _, w := range written {
		names = append(names, filepath.Base(w))
	}
	if !slices.Equal(names, want) {
		t.Errorf("written %v, want %v", names, want)
	}
	for _, name := range want {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Error(err)
			continue
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if b := img.Bounds(); b.Dx() < 100 || b.Dy() < 100 {
			t.Errorf("%s: %v", name, b)
		}
	}
}

// TestFanoutChartOneFile: one file whose rounds have several watcher
// counts and two transports draws latency against watchers, a line pair
// per transport; one count over two transports draws bars named by
// transport.
func TestFanoutChartOneFile(t *testing.T) {
	round := func(n int, tr string, p99 time.Duration) fanoutResult {
		return fanoutResult{Watchers: n, Transport: tr, Events: accounting.Report{AllReceived: accounting.Latencies{Count: 5, P50: p99 / 2, P99: p99}}}
	}
	r := &result{Fanout: []fanoutResult{
		round(100, transportH2, 4*time.Millisecond), round(100, transportHTTP1, 6*time.Millisecond),
		round(1000, transportH2, 20*time.Millisecond), round(1000, transportHTTP1, 30*time.Millisecond),
		{Watchers: 10000, Transport: transportH2}, // delivered nothing: left out
	}}
	runs := []chartRun{{"apiloom", r}}
	points, names, several := fanoutPoints(runs)
	if !several || !slices.Equal(names, []string{"apiloom h2", "apiloom http1"}) || len(points) != 4 {
		t.Fatalf("points %v, series %v, several %v", points, names, several)
	}
	if points[3] != (fanoutPoint{"apiloom http1", 1000, 15, 30}) {
		t.Errorf("last point %+v", points[3])
	}
	p, err := fanoutChart(runs)
	if err != nil || p == nil || p.X.Label.Text != "watchers" {
		t.Fatalf("chart %v, %v: want latency against watchers", p, err)
	}

	r.Fanout = r.Fanout[:2]
	points, names, several = fanoutPoints(runs)
	if several || len(points) != 2 || !slices.Equal(names, []string{"apiloom h2", "apiloom http1"}) {
		t.Fatalf("one count: points %v, series %v, several %v", points, names, several)
	}
	if p, err := fanoutChart(runs); err != nil || p == nil || p.X.Label.Text != "" {
		t.Fatalf("one count: chart %v, %v: want bars", p, err)
	}

	// One transport in every run: series are the labels alone.
	r.Fanout = r.Fanout[:1]
	if _, names, _ := fanoutPoints(runs); !slices.Equal(names, []string{"apiloom"}) {
		t.Errorf("one transport: series %v", names)
	}
}

// TestThroughputChartFloor: the floor's puts/s is a third group when a
// run has it, and a run with only a floor still draws.
func TestThroughputChartFloor(t *testing.T) {
	runs := []chartRun{
		{"apiloom", &result{List: &listResult{CreateRate: 3000, UpdateRate: 2000}, Floor: &floorResult{Rate: 9000}}},
		{"peer", &result{Floor: &floorResult{Rate: 8000}}},
	}
	p, err := throughputChart(runs)
	if err != nil || p == nil {
		t.Fatalf("chart %v, %v", p, err)
	}
	if p.X.Max != 2.5 || p.Y.Max < 9000 {
		t.Errorf("x to %v (want 3 groups, 2.5), y to %v (want the floor's 9000 in view)", p.X.Max, p.Y.Max)
	}
	runs[0].r.Floor, runs[1].r.Floor = nil, nil
	if p, _ := throughputChart(runs); p == nil || p.X.Max != 1.5 {
		t.Errorf("without a floor: %v", p)
	}
}
