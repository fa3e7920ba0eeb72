package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/apiloom/apiloom/cmd/apiloom-load/internal/accounting"
)

// TestParseStartPIDs: the PIDs are the last non-empty line's fields, as
// many as --pid gave; anything else is refused.
func TestParseStartPIDs(t *testing.T) {
	for _, tc := range []struct {
		out  string
		want int
		pids []int
	}{
		{"starting\n123 456\n\n", 2, []int{123, 456}},
		{"42", 1, []int{42}},
		{"", 0, []int{}},
	} {
		got, err := parseStartPIDs([]byte(tc.out), tc.want)
		if err != nil || !slices.Equal(got, tc.pids) {
			t.Errorf("parseStartPIDs(%q, %d) = %v, %v; want %v", tc.out, tc.want, got, err, tc.pids)
		}
	}
	for _, tc := range []struct {
		out  string
		want int
	}{{"123", 2}, {"123 456", 1}, {"12x", 1}, {"0", 1}, {"-5", 1}, {"", 1}} {
		if got, err := parseStartPIDs([]byte(tc.out), tc.want); !errors.Is(err, errStartOutput) {
			t.Errorf("parseStartPIDs(%q, %d) = %v, %v; want errStartOutput", tc.out, tc.want, got, err)
		}
	}
}

// TestRunHook: the command runs in bash (functions exported to it work),
// its output is returned, and a failing command is an error.
func TestRunHook(t *testing.T) {
	out, err := runHook(context.Background(), "f() { echo \"x $1\"; }; f 7; echo '1 2'")
	if err != nil || string(out) != "x 7\n1 2\n" {
		t.Fatalf("runHook = %q, %v", out, err)
	}
	if _, err := runHook(context.Background(), "exit 3"); err == nil {
		t.Fatal("runHook of a failing command: no error")
	}
}

// TestEachObjectFrom: only the objects from..n-1 are visited, each once.
func TestEachObjectFrom(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	n, err := eachObjectFrom(context.Background(), "p", 3, 7, 3, "visit", func(name string) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, name)
		return name != "p-000004", nil
	})
	slices.Sort(seen)
	if err != nil || n != 3 || !slices.Equal(seen, []string{"p-000003", "p-000004", "p-000005", "p-000006"}) {
		t.Fatalf("eachObjectFrom = %d, %v; visited %v", n, err, seen)
	}
}

// TestAwaitServing: /readyz is polled until 200, then LIST RV=0 until it
// holds the objects; the two times are in order.
func TestAwaitServing(t *testing.T) {
	var readyzAsked, listAsked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/readyz":
			if readyzAsked.Add(1) < 3 {
				w.WriteHeader(http.StatusServiceUnavailable)
			}
		case r.URL.Query().Get("resourceVersion") == "0":
			items := []string{`{}`}
			if listAsked.Add(1) >= 3 {
				items = []string{`{}`, `{}`, `{}`}
			}
			fmt.Fprintf(w, `{"items":[%s]}`, strings.Join(items, ","))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	tg := &target{cfg: &rest.Config{Host: srv.URL}, collection: srv.URL + "/apis/g/v1/namespaces/bench/things", plain: srv.Client()}
	start := time.Now()
	readyz, ready, items, err := awaitServing(context.Background(), tg, start, 3, false, time.Minute)
	if err != nil || items != 3 || readyz <= 0 || ready < readyz {
		t.Fatalf("awaitServing = %v, %v, %d, %v", readyz, ready, items, err)
	}
	if readyzAsked.Load() != 3 || listAsked.Load() != 3 {
		t.Fatalf("asked /readyz %d times, LIST %d times; want 3 and 3", readyzAsked.Load(), listAsked.Load())
	}
}

// TestAwaitServingGivesUp: a server that never holds the objects is an
// error naming what it last answered (here the wait ends when the third
// LIST cancels it, as the timeout would).
func TestAwaitServingGivesUp(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var lists atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			fmt.Fprint(w, `{"items":[{}]}`)
			if lists.Add(1) == 3 {
				cancel()
			}
		}
	}))
	defer srv.Close()
	tg := &target{cfg: &rest.Config{Host: srv.URL}, collection: srv.URL + "/things", plain: srv.Client()}
	_, _, items, err := awaitServing(ctx, tg, time.Now(), 5, false, time.Minute)
	if err == nil || items != 1 || !strings.Contains(err.Error(), "1 items") {
		t.Fatalf("awaitServing = %d, %v; want a timeout after 1 item", items, err)
	}
}

// scaleRun is a result with scale steps at counts, its figures scaled by
// k so that two runs differ.
func scaleRun(label string, k float64, counts ...int) *result {
	r := &result{Label: label, Scale: &scaleResult{}}
	for _, n := range counts {
		f := float64(n) * k
		r.Scale.Steps = append(r.Scale.Steps, scaleStep{
			Objects: n,
			List: &listResult{Objects: n, Created: int64(n), CreateRate: 1000 / k, Items: n,
				listKinds: listKinds{RV0: listTimes{Median: time.Duration(f * 1e4)}, Consistent: listTimes{Median: time.Duration(f * 2e4)}, Paged: listTimes{Median: time.Duration(f * 3e4)}},
				Gets:      &getKinds{Consistent: getTimes{Latency: accounting.Latencies{P50: time.Millisecond}}, RV0: getTimes{Latency: accounting.Latencies{P50: time.Millisecond / 2}}}},
			Memory:      scaleMemory{RSSKiB: int64(f), HeapInuseBytes: int64(f) << 9},
			EtcdDBBytes: int64(f) << 11,
			Informer: &informerResult{Rounds: []informerRound{
				{Objects: n, Items: n, Format: formatJSON, Median: time.Duration(f * 1e5), All: []time.Duration{1}},
				{Objects: n, Format: formatProtobuf, Error: "not served", NotServed: true},
			}},
			Fanout:  []fanoutResult{{Watchers: 100, Transport: transportH2, Events: accounting.Report{AllReceived: accounting.Latencies{Count: 1, P50: time.Millisecond, P99: 2 * time.Millisecond}}}},
			Restart: &scaleRestartTimes{ReadyzTime: time.Second, ReadyTime: time.Duration(f) * time.Millisecond, Memory: scaleMemory{RSSKiB: int64(f / 2)}},
		})
	}
	return r
}

// TestScaleMetrics: a row per figure and count, each target's figure at
// that count, absent where a target has no step at it; a format no
// target served has no row.
func TestScaleMetrics(t *testing.T) {
	runs := []*result{scaleRun("apiloom", 1, 1000, 3000), scaleRun("peer", 2, 1000)}
	rows := map[string]metric{}
	for _, m := range scaleMetrics(runs) {
		rows[m.name] = m
	}
	for name, want := range map[string][2]float64{
		"scale 1000 creates/s":                       {1000, 500},
		"scale 3000 RSS MiB":                         {3000.0 / 1024, -1},
		"scale 1000 etcd db MiB":                     {1000.0 / 512, 2000.0 / 512},
		"scale 3000 LIST paged median ms":            {90, -1},
		"scale 1000 informer json list+watch sync s": {0.1, 0.2},
		"scale 1000 restart → full LIST RV=0 s":      {1, 2},
		"scale 1000 fanout write→all p99 ms":         {2, 2},
		"scale 1000 GET RV=0 p50 ms":                 {0.5, 0.5},
	} {
		m, ok := rows[name]
		if !ok {
			t.Errorf("no row %q", name)
			continue
		}
		for i, r := range runs {
			v, ok := m.value(r)
			if want[i] < 0 {
				if ok {
					t.Errorf("%s of %s = %v; want none", name, r.Label, v)
				}
				continue
			}
			if !ok || v < want[i]*0.999 || v > want[i]*1.001 {
				t.Errorf("%s of %s = %v, %v; want %v", name, r.Label, v, ok, want[i])
			}
		}
	}
	if m, ok := rows["scale 1000 informer protobuf list+watch sync s"]; ok {
		if v, ok := m.value(runs[0]); ok {
			t.Errorf("a format not served has a figure: %v", v)
		}
	}
	var buf bytes.Buffer
	compareTable(&buf, runs)
	if !strings.Contains(buf.String(), "scale 3000 RSS MiB") {
		t.Fatalf("compare table without the scale rows:\n%s", buf.String())
	}
}

// TestScaleCharts: the scale charts are written from runs with steps,
// and none from runs without.
func TestScaleCharts(t *testing.T) {
	dir := t.TempDir()
	written, err := writeCharts(dir, []chartRun{{"apiloom", scaleRun("apiloom", 1, 1000, 3000)}, {"peer", scaleRun("peer", 2, 1000, 3000)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range scaleCharts {
		path := filepath.Join(dir, c.file)
		if !slices.Contains(written, path) {
			t.Errorf("%s not written; written %v", c.file, written)
		} else if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", c.file, err)
		}
	}
	written, err = writeCharts(t.TempDir(), []chartRun{{"apiloom", &result{Label: "apiloom"}}})
	if err != nil || len(written) != 0 {
		t.Fatalf("charts of a run without data = %v, %v", written, err)
	}
}

// TestScaleRows: the printed summary has a line per step and its failures.
func TestScaleRows(t *testing.T) {
	sc := scaleRun("apiloom", 1, 1000).Scale
	sc.Steps[0].fail("get", errors.New("HTTP 500"))
	var text []string
	for _, r := range scaleRows(sc) {
		text = append(text, r[0]+" "+r[1])
	}
	all := strings.Join(text, "\n")
	for _, want := range []string{"scale 1000 1000 objects, 1000 created at 1000/s", "LIST 1000 items", "informer json list+watch", "restart", "FAILED get HTTP 500"} {
		if !strings.Contains(all, want) {
			t.Errorf("summary lacks %q:\n%s", want, all)
		}
	}
}

// TestScaleViolations: a scale step's fan-out round that lost events is
// a violation named by its step.
func TestScaleViolations(t *testing.T) {
	r := scaleRun("apiloom", 1, 1000, 3000)
	if v := r.violations(); len(v) != 0 {
		t.Fatalf("violations of a clean run = %v", v)
	}
	r.Scale.Steps[1].Fanout[0].Events.Missing = 2
	v := r.violations()
	if len(v) != 1 || !strings.HasPrefix(v[0], "scale 3000 fanout 100 h2: missing 2") {
		t.Fatalf("violations = %q", v)
	}
}
