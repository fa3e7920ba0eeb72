package main

import (
	"bufio"
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiloom/apiloom/cmd/apiloom-load/internal/accounting"
)

func TestCompareRatios(t *testing.T) {
	dir := t.TempDir()
	a := &result{Label: "apiloom", Fanout: []fanoutResult{{Watchers: 10, Transport: transportH2, CPUPerEvent: 2 * time.Microsecond,
		Events: accounting.Report{Delivered: 100}}}, Baseline: &baselineResult{LoopbackWrite: time.Microsecond}}
	b := &result{Label: "kube", Fanout: []fanoutResult{{Watchers: 10, Transport: transportH2, CPUPerEvent: 6 * time.Microsecond,
		Events: accounting.Report{Delivered: 90, Missing: 10}}}}
	pa, pb := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	if err := a.write(pa); err != nil {
		t.Fatal(err)
	}
	if err := b.write(pb); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := runCompare(&out, []string{pa, pb}); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	row := func(name string) []string {
		for _, l := range strings.Split(s, "\n") {
			if strings.Contains(l, name) {
				return strings.Fields(strings.TrimSpace(strings.ReplaceAll(l, name, "")))
			}
		}
		t.Fatalf("no row %q in\n%s", name, s)
		return nil
	}
	if got := row("fanout 10 h2 server CPU µs/event"); strings.Join(got, " ") != "2.00 6.00 3.00" {
		t.Errorf("CPU row = %v, want 2.00 6.00 3.00", got)
	}
	if got := row("fanout 10 h2 CPU/event ÷ loopback write"); strings.Join(got, " ") != "2.0 - -" {
		t.Errorf("baseline ratio row = %v", got)
	}
	if strings.Contains(s, "idle watchers") {
		t.Error("rows without any figure must be left out")
	}
	if !strings.Contains(s, "! kube: fanout 10 h2: missing 10") {
		t.Errorf("violations not reported:\n%s", s)
	}
	if err := runCompare(&out, nil); err == nil {
		t.Error("compare without files succeeded")
	}
}

// TestComparePagedList: the paged traversal, and the create CPU per
// object, are rows of the table with their ratios.
func TestComparePagedList(t *testing.T) {
	dir := t.TempDir()
	a := &result{Label: "etcd", List: &listResult{Created: 100, CreateCPU: cpuSpan{Total: 200 * time.Millisecond},
		listKinds: listKinds{Paged: listTimes{Median: 40 * time.Millisecond}}, Pages: 20}}
	b := &result{Label: "kine", List: &listResult{Created: 100, CreateCPU: cpuSpan{Total: time.Second},
		listKinds: listKinds{Paged: listTimes{Median: 100 * time.Millisecond}}, Pages: 20}}
	pa, pb := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	if err := a.write(pa); err != nil {
		t.Fatal(err)
	}
	if err := b.write(pb); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := runCompare(&out, []string{pa, pb}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"list paged median ms (whole traversal)", "40.0", "100.0", "2.50", "list create server CPU µs/create", "2000", "10000", "5.00"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
}

func TestParseMetrics(t *testing.T) {
	text := `# HELP go_goroutines Number of goroutines.
# TYPE go_goroutines gauge
go_goroutines 1234
go_memstats_heap_inuse_bytes 5.5e+06
go_gc_duration_seconds{quantile="0"} 1e-05
`
	m, err := parseMetrics(bufio.NewScanner(strings.NewReader(text)), []string{"go_goroutines", "go_memstats_heap_inuse_bytes", "absent"})
	if err != nil {
		t.Fatal(err)
	}
	if m["go_goroutines"] != 1234 || m["go_memstats_heap_inuse_bytes"] != 5.5e6 || len(m) != 2 {
		t.Fatalf("parseMetrics = %v", m)
	}
}

func TestConfigValidate(t *testing.T) {
	c := defaultConfig()
	c.Kubeconfig = "k"
	if err := c.validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	c.FanoutRate, c.FanoutDuration = 1e6, time.Hour
	c.PayloadField = "payload"
	err := c.validate()
	if err == nil || !strings.Contains(err.Error(), "writes") || !strings.Contains(err.Error(), "payload-field") {
		t.Fatalf("unbounded run accepted or problems not all named: %v", err)
	}
}

// TestConfigWatcherLimits: 100,000 idle watchers are accepted (issue 18's
// target), one more is not, and fan-out keeps its lower bound.
func TestConfigWatcherLimits(t *testing.T) {
	for _, tc := range []struct {
		idle, fanout int
		formats      []string
		ok           bool
	}{
		{100000, 1000, []string{formatJSON, formatCBOR, formatProtobuf}, true},
		{100001, 1000, []string{formatJSON}, false},
		{1000, 100000, []string{formatJSON}, false},
		{1000, 1000, []string{"yaml"}, false},
	} {
		c := defaultConfig()
		c.Kubeconfig = "k"
		c.IdleWatchers, c.FanoutWatchers, c.InformerFormats = tc.idle, []int{tc.fanout}, tc.formats
		if err := c.validate(); (err == nil) != tc.ok {
			t.Errorf("idle %d, fanout %d, formats %v: %v, want ok=%v", tc.idle, tc.fanout, tc.formats, err, tc.ok)
		}
	}
}

// compareOutput writes runs to files and returns compare's output.
func compareOutput(t *testing.T, runs ...*result) string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for i, r := range runs {
		p := filepath.Join(dir, strings.Repeat("r", i+1)+".json")
		if err := r.write(p); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	var out bytes.Buffer
	if err := runCompare(&out, paths); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// tableRow returns the cells after the metric name of the row named name.
func tableRow(t *testing.T, table, name string) string {
	t.Helper()
	for _, l := range strings.Split(table, "\n") {
		if cells, ok := strings.CutPrefix(strings.TrimSpace(l), name+" "); ok {
			return strings.Join(strings.Fields(cells), " ")
		}
	}
	t.Fatalf("no row %q in\n%s", name, table)
	return ""
}

// TestCompareFanoutRounds: each watcher count and transport is its own
// set of rows, matched across runs by both; a round one run lacks is "-".
func TestCompareFanoutRounds(t *testing.T) {
	round := func(n int, tr string, p99ms int) fanoutResult {
		return fanoutResult{Watchers: n, Transport: tr, Events: accounting.Report{Delivered: int64(n),
			AllReceived: accounting.Latencies{Count: 1, P99: time.Duration(p99ms) * time.Millisecond}}}
	}
	a := &result{Label: "a", Fanout: []fanoutResult{round(100, transportH2, 2), round(100, transportHTTP1, 3), round(1000, transportH2, 10)}}
	b := &result{Label: "b", Fanout: []fanoutResult{round(1000, transportH2, 40), round(100, transportH2, 4)}}
	s := compareOutput(t, a, b)
	for name, want := range map[string]string{
		"fanout 100 h2 write→all p99 ms":    "2.0 4.0 2.00",
		"fanout 100 http1 write→all p99 ms": "3.0 - -",
		"fanout 1000 h2 write→all p99 ms":   "10.0 40.0 4.00",
		"fanout 1000 h2 events delivered":   "1000 1000 1.00",
	} {
		if got := tableRow(t, s, name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if strings.Index(s, "fanout 100 h2 ") > strings.Index(s, "fanout 100 http1 ") || strings.Index(s, "fanout 100 http1 ") > strings.Index(s, "fanout 1000 h2 ") {
		t.Errorf("rounds not in the order they ran:\n%s", s)
	}
}

// TestCompareFloor: floor puts/s and latency rows, and creates ÷ floor
// only where the creates ran at the floor's concurrency.
func TestCompareFloor(t *testing.T) {
	floor := func(rate float64, workers int) *floorResult {
		return &floorResult{Puts: 1000, Workers: workers, Rate: rate, ValueBytes: 1200,
			Latency: accounting.Latencies{Count: 1000, P50: 2 * time.Millisecond, P99: 9 * time.Millisecond}}
	}
	list := func(rate float64, creators int) *listResult {
		return &listResult{Created: 1000, Creators: creators, CreateRate: rate}
	}
	a := &result{Label: "a", Floor: floor(8000, 32), List: list(4000, 32)}
	b := &result{Label: "b", Floor: floor(5000, 32), List: list(500, 32)}
	c := &result{Label: "c", Floor: floor(5000, 8), List: list(500, 32)}
	s := compareOutput(t, a, b, c)
	for name, want := range map[string]string{
		"floor etcd puts/s":             "8000 5000 5000 0.62 0.62",
		"floor put p99 ms":              "9.00 9.00 9.00 1.00 1.00",
		"list creates/s ÷ floor puts/s": "0.50 0.10 - 0.20 -",
	} {
		if got := tableRow(t, s, name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}
