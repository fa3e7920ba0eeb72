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
	a := &result{Label: "apiloom", Fanout: &fanoutResult{Watchers: 10, CPUPerEvent: 2 * time.Microsecond,
		Events: accounting.Report{Delivered: 100}}, Baseline: &baselineResult{LoopbackWrite: time.Microsecond}}
	b := &result{Label: "kube", Fanout: &fanoutResult{Watchers: 10, CPUPerEvent: 6 * time.Microsecond,
		Events: accounting.Report{Delivered: 90, Missing: 10}}}
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
	if got := row("fanout server CPU µs/event"); strings.Join(got, " ") != "2.00 6.00 3.00" {
		t.Errorf("CPU row = %v, want 2.00 6.00 3.00", got)
	}
	if got := row("fanout CPU/event ÷ loopback write"); strings.Join(got, " ") != "2.0 - -" {
		t.Errorf("baseline ratio row = %v", got)
	}
	if strings.Contains(s, "idle watchers") {
		t.Error("rows without any figure must be left out")
	}
	if !strings.Contains(s, "! kube: fanout: missing 10") {
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
		Paged: listTimes{Median: 40 * time.Millisecond}, Pages: 20}}
	b := &result{Label: "kine", List: &listResult{Created: 100, CreateCPU: cpuSpan{Total: time.Second},
		Paged: listTimes{Median: 100 * time.Millisecond}, Pages: 20}}
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
		c.IdleWatchers, c.FanoutWatchers, c.InformerFormats = tc.idle, tc.fanout, tc.formats
		if err := c.validate(); (err == nil) != tc.ok {
			t.Errorf("idle %d, fanout %d, formats %v: %v, want ok=%v", tc.idle, tc.fanout, tc.formats, err, tc.ok)
		}
	}
}
