package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apiloom/apiloom/cmd/apiloom-load/internal/accounting"
	"github.com/apiloom/apiloom/cmd/apiloom-load/internal/procfs"
)

// TestGetNames: the draw is fixed by the seed, stays among the objects
// made, reaches all of them (not a prefix), and another seed reads in
// another order.
func TestGetNames(t *testing.T) {
	const objects, n = 10, 1000
	a := getNames("load-list", objects, n, getSeed)
	if len(a) != n {
		t.Fatalf("%d names, want %d", len(a), n)
	}
	if b := getNames("load-list", objects, n, getSeed); !slices.Equal(a, b) {
		t.Fatal("same seed, different names")
	}
	if c := getNames("load-list", objects, n, getSeed+1); slices.Equal(a, c) {
		t.Fatal("another seed drew the same names")
	}
	seen := map[string]int{}
	for _, name := range a {
		seen[name]++
	}
	for i := range objects {
		if name := fmt.Sprintf("load-list-%06d", i); seen[name] == 0 {
			t.Errorf("%s never drawn in %d", name, n)
		}
		delete(seen, fmt.Sprintf("load-list-%06d", i))
	}
	if len(seen) != 0 {
		t.Errorf("names outside the objects made: %v", seen)
	}
	if got := getNames("load-list", 1, 3, getSeed); strings.Join(got, ",") != "load-list-000000,load-list-000000,load-list-000000" {
		t.Errorf("one object: %v", got)
	}
}

// objectServer answers GETs of .../things/NAME with the object NAME, or
// with what answer says, and records the requests (not /metrics).
type objectServer struct {
	answer func(name string) (int, string)
	mu     sync.Mutex // guards asked
	asked  []string
}

func (o *objectServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/metrics" {
		http.NotFound(w, r)
		return
	}
	o.mu.Lock()
	o.asked = append(o.asked, path.Base(r.URL.Path)+"?"+r.URL.RawQuery+" "+r.Header.Get("Accept"))
	o.mu.Unlock()
	code, body := http.StatusOK, fmt.Sprintf(`{"kind":"Thing","metadata":{"name":%q}}`, path.Base(r.URL.Path))
	if o.answer != nil {
		code, body = o.answer(path.Base(r.URL.Path))
	}
	w.WriteHeader(code)
	fmt.Fprint(w, body)
}

func newObjectTarget(t *testing.T, o *objectServer) (*target, *sampler) {
	t.Helper()
	srv := httptest.NewServer(o)
	t.Cleanup(srv.Close)
	tg := &target{collection: srv.URL + "/apis/g/v1/namespaces/bench/things", plain: srv.Client()}
	// The test process serves the GETs, so its own CPU is the server's.
	s := &sampler{pids: procfs.Group{{PID: os.Getpid()}}, metrics: srv.URL + "/metrics", client: srv.Client()}
	return tg, s
}

// TestTimeGets: every name is read by name, consistent first and then
// resourceVersion=0, in order, asking for JSON; each kind has a latency
// per GET and the CPU span around it.
func TestTimeGets(t *testing.T) {
	o := &objectServer{}
	tg, s := newObjectTarget(t, o)
	names := []string{"load-list-000003", "load-list-000001", "load-list-000003"}
	g, err := timeGets(context.Background(), tg, s, names)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"load-list-000003? application/json", "load-list-000001? application/json", "load-list-000003? application/json",
		"load-list-000003?resourceVersion=0 application/json", "load-list-000001?resourceVersion=0 application/json", "load-list-000003?resourceVersion=0 application/json",
	}
	if !slices.Equal(o.asked, want) {
		t.Fatalf("requests =\n%q\nwant\n%q", o.asked, want)
	}
	for kind, times := range map[string]getTimes{"consistent": g.Consistent, "rv0": g.RV0} {
		if l := times.Latency; l.Count != len(names) || l.P50 <= 0 || l.P99 < l.P50 || l.Max < l.P99 {
			t.Errorf("%s latency = %+v", kind, l)
		}
		if len(times.CPU.PerProcess) != 1 {
			t.Errorf("%s CPU span not recorded: %+v", kind, times.CPU)
		}
	}
}

// TestTimeGetsErrors: an answer other than 200, or a 200 with another
// object, ends the GETs with an error naming the object.
func TestTimeGetsErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(string) (int, string)
		want   string
	}{
		{"not found", func(string) (int, string) { return http.StatusNotFound, `{"kind":"Status","reason":"NotFound"}` }, "GET load-list-000000: HTTP 404"},
		{"too many requests", func(string) (int, string) { return http.StatusTooManyRequests, `{}` }, "HTTP 429"},
		{"another object", func(string) (int, string) { return http.StatusOK, `{"metadata":{"name":"other"}}` }, `answered with "other"`},
		{"a list", func(string) (int, string) { return http.StatusOK, `{"kind":"ThingList","metadata":{},"items":[]}` }, `answered with ""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg, s := newObjectTarget(t, &objectServer{answer: tc.answer})
			g, err := timeGets(context.Background(), tg, s, []string{"load-list-000000"})
			if err == nil || !strings.Contains(err.Error(), tc.want) || g != nil {
				t.Fatalf("timeGets = %v, %v; want an error with %q", g, err, tc.want)
			}
		})
	}
}

// TestCompareGets: each kind's p50, p99 and CPU per GET are rows with
// their ratio to the first run; a run without GETs (a file from before
// them, or whose GETs failed) shows "-".
func TestCompareGets(t *testing.T) {
	gets := func(p50us, p99us, rv0p50us, rv0p99us int, cpu, rv0CPU time.Duration) *getKinds {
		us := func(n int) time.Duration { return time.Duration(n) * time.Microsecond }
		return &getKinds{
			Consistent: getTimes{Latency: accounting.Latencies{Count: 1000, P50: us(p50us), P99: us(p99us)}, CPU: cpuSpan{Total: cpu}},
			RV0:        getTimes{Latency: accounting.Latencies{Count: 1000, P50: us(rv0p50us), P99: us(rv0p99us)}, CPU: cpuSpan{Total: rv0CPU}},
		}
	}
	a := &result{Label: "a", List: &listResult{GetRequests: 1000, Gets: gets(500, 2000, 200, 900, 400*time.Millisecond, 150*time.Millisecond)}}
	b := &result{Label: "b", List: &listResult{GetRequests: 1000, Gets: gets(1500, 3000, 300, 1800, 1200*time.Millisecond, 600*time.Millisecond)}}
	c := &result{Label: "c", List: &listResult{GetError: "GET load-list-000001: HTTP 404"}}
	s := compareOutput(t, a, b, c)
	for name, want := range map[string]string{
		"list GET consistent p50 ms":            "0.50 1.50 - 3.00 -",
		"list GET consistent p99 ms":            "2.00 3.00 - 1.50 -",
		"list GET consistent server CPU µs/GET": "400 1200 - 3.00 -",
		"list GET RV=0 p50 ms":                  "0.20 0.30 - 1.50 -",
		"list GET RV=0 p99 ms":                  "0.90 1.80 - 2.00 -",
		"list GET RV=0 server CPU µs/GET":       "150 600 - 4.00 -",
	} {
		if got := tableRow(t, s, name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if s := compareOutput(t, c, &result{Label: "d", List: &listResult{}}); strings.Contains(s, "list GET") {
		t.Errorf("GET rows without any GET figure:\n%s", s)
	}
}

// TestPrintGets: the summary has a GET row and a CPU row per kind, and the
// GET error when they failed.
func TestPrintGets(t *testing.T) {
	var out strings.Builder
	r := &result{Label: "a", List: &listResult{GetRequests: 1000, Gets: &getKinds{
		Consistent: getTimes{Latency: accounting.Latencies{Count: 1000, P50: 500 * time.Microsecond, P99: 2 * time.Millisecond}, CPU: cpuSpan{Total: 400 * time.Millisecond}},
		RV0:        getTimes{Latency: accounting.Latencies{Count: 1000, P50: 200 * time.Microsecond, P99: 900 * time.Microsecond}, CPU: cpuSpan{Total: 150 * time.Millisecond}},
	}}}
	r.print(&out)
	for _, want := range []string{
		"1000 by name of each kind: consistent p50 500.00µs p99 2000.00µs   RV=0 p50 200.00µs p99 900.00µs",
		"consistent 0.40s = 400.00µs per GET   RV=0 0.15s = 150.00µs per GET",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
	out.Reset()
	(&result{Label: "a", List: &listResult{GetError: "GET x: HTTP 404"}}).print(&out)
	if s := out.String(); !strings.Contains(s, "GET error") || strings.Contains(s, "per GET") {
		t.Errorf("failed GETs printed as\n%s", s)
	}
}
