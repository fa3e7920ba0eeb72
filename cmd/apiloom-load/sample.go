package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/apiloom/apiloom/cmd/apiloom-load/internal/procfs"
)

// serverSample is one reading of the server: /proc figures of its
// processes and, where the server exports Go runtime metrics, heap and
// goroutines.
type serverSample struct {
	At time.Time
	// CPU and RSSKiB add up the --pid processes; PerProcessCPU and
	// PerProcessRSSKiB are each.
	CPU              time.Duration
	RSSKiB           int64
	PerProcessCPU    []time.Duration
	PerProcessRSSKiB []int64
	// HeapInuse and Goroutines come from /metrics; 0 if unavailable.
	HeapInuse  int64
	Goroutines int64
	// SelfCPU is the load generator's own CPU time.
	SelfCPU time.Duration
	// ProcErr and MetricsErr say why a figure is missing.
	ProcErr, MetricsErr string
}

// sampler reads the server's figures.
type sampler struct {
	pids    procfs.Group
	metrics string // URL of /metrics
	client  *http.Client
}

func newSampler(t *target, pids procfs.Group) *sampler {
	return &sampler{pids: pids, metrics: strings.TrimSuffix(t.cfg.Host, "/") + "/metrics", client: t.plain}
}

// sample reads everything it can; what it cannot read is noted in the
// sample, not fatal, because a server may export no metrics.
func (s *sampler) sample(ctx context.Context) serverSample {
	out := serverSample{At: time.Now()}
	if len(s.pids) > 0 {
		sum, each, err := s.pids.Read()
		if err != nil {
			out.ProcErr = err.Error()
		} else {
			out.CPU, out.RSSKiB = sum.CPU, sum.RSSKiB
			for _, e := range each {
				out.PerProcessCPU = append(out.PerProcessCPU, e.CPU)
				out.PerProcessRSSKiB = append(out.PerProcessRSSKiB, e.RSSKiB)
			}
		}
	}
	if self, err := procfs.Read(0); err == nil {
		out.SelfCPU = self.CPU
	}
	m, err := s.scrape(ctx, "go_memstats_heap_inuse_bytes", "go_goroutines")
	if err != nil {
		out.MetricsErr = err.Error()
	} else {
		out.HeapInuse, out.Goroutines = int64(m["go_memstats_heap_inuse_bytes"]), int64(m["go_goroutines"])
	}
	return out
}

// scrape reads the named unlabelled metrics from the Prometheus text
// exposition at /metrics.
func (s *sampler) scrape(ctx context.Context, names ...string) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.metrics, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: HTTP %d", resp.StatusCode)
	}
	return parseMetrics(bufio.NewScanner(resp.Body), names)
}

// parseMetrics picks the named unlabelled samples out of a Prometheus text
// exposition.
func parseMetrics(sc *bufio.Scanner, names []string) (map[string]float64, error) {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	out := map[string]float64{}
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok || !want[name] {
			continue
		}
		if v, err := strconv.ParseFloat(strings.Fields(value)[0], 64); err == nil {
			out[name] = v
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// cpuSpan is the CPU the measured processes spent between two samples.
type cpuSpan struct {
	Total time.Duration `json:"total"`
	// PerProcess follows the order of --pid then --pid-tree.
	PerProcess []time.Duration `json:"perProcess,omitempty"`
}

// cpuBetween is the CPU spent from before to after; false if either
// sample could not read the processes.
func cpuBetween(before, after serverSample) (cpuSpan, bool) {
	if before.ProcErr != "" || after.ProcErr != "" || len(after.PerProcessCPU) != len(before.PerProcessCPU) {
		return cpuSpan{}, false
	}
	span := cpuSpan{Total: after.CPU - before.CPU}
	for i := range after.PerProcessCPU {
		span.PerProcess = append(span.PerProcess, after.PerProcessCPU[i]-before.PerProcessCPU[i])
	}
	return span, true
}

// add accumulates o into c.
func (c *cpuSpan) add(o cpuSpan) {
	c.Total += o.Total
	if c.PerProcess == nil {
		c.PerProcess = make([]time.Duration, len(o.PerProcess))
	}
	for i := range min(len(c.PerProcess), len(o.PerProcess)) {
		c.PerProcess[i] += o.PerProcess[i]
	}
}
