package resources

import (
	"context"
	"fmt"
	"net/http"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/procfs"
)

// EtcdWatcherMetric is the gauge etcd keeps of its watchers (mvcc's
// watcherGauge, server/storage/mvcc/metrics.go: one per watch, synced or
// not, on that member); the cluster's count is the sum over members.
const EtcdWatcherMetric = "etcd_debugging_mvcc_watcher_total"

// GoroutineMetric is the Go collector's gauge of live goroutines.
const GoroutineMetric = "go_goroutines"

// procFigures reads a process's resident set size (/proc/<pid>/stat) and
// counts its open fds (/proc/<pid>/fd).
func procFigures(pid int) (int64, int, error) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return 0, 0, err
	}
	st, err := p.Stat()
	if err != nil {
		return 0, 0, err
	}
	fds, err := p.FileDescriptorsLen()
	if err != nil {
		return 0, 0, err
	}
	return int64(st.ResidentMemory()), fds, nil
}

// Gauge GETs url with client and returns the value of the gauge name in
// the Prometheus text it answers.
func Gauge(ctx context.Context, client *http.Client, url, name string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("resources: GET %s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return 0, fmt.Errorf("resources: %s: %w", url, err)
	}
	f := fams[name]
	if f == nil || len(f.GetMetric()) == 0 || f.GetMetric()[0].GetGauge() == nil {
		return 0, fmt.Errorf("resources: %s has no gauge %s", url, name)
	}
	return f.GetMetric()[0].GetGauge().GetValue(), nil
}
