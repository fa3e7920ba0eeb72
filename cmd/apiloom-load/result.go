package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"
)

// result is one run against one target, as written to --out and read by
// compare.
type result struct {
	Label    string `json:"label"`
	Server   string `json:"server"`
	Resource string `json:"resource"`
	PIDs     []int  `json:"pids,omitempty"`
	PIDTrees []int  `json:"pidTrees,omitempty"`
	// ProcessNames name the entries of every per-process CPU figure.
	ProcessNames []string  `json:"processNames,omitempty"`
	Started      time.Time `json:"started"`
	// Fanout holds the fan-out rounds in the order they ran.
	Fanout []fanoutResult `json:"fanoutRounds,omitempty"`
	// LegacyFanout is the single fan-out of files written before rounds;
	// readResult moves it into Fanout.
	LegacyFanout *fanoutResult   `json:"fanout,omitempty"`
	Floor        *floorResult    `json:"floor,omitempty"`
	Idle         *idleResult     `json:"idle,omitempty"`
	List         *listResult     `json:"list,omitempty"`
	Baseline     *baselineResult `json:"baseline,omitempty"`
	Stalled      *stalledResult  `json:"stalled,omitempty"`
	Informer     *informerResult `json:"informer,omitempty"`
	// RapidReset is the rapid-reset attack scenario.
	RapidReset *rapidResetResult `json:"rapidReset,omitempty"`
	// Admission is the admission scenario's rounds.
	Admission *admissionResult `json:"admission,omitempty"`
	// Scale is the scale scenario's steps.
	Scale *scaleResult `json:"scale,omitempty"`
	// Failures names scenarios that could not run, with why.
	Failures map[string]string `json:"failures,omitempty"`
}

func (r *result) write(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func readResult(path string) (*result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if r.LegacyFanout != nil {
		r.Fanout = append([]fanoutResult{*r.LegacyFanout}, r.Fanout...)
		r.LegacyFanout = nil
	}
	for i := range r.Fanout {
		if r.Fanout[i].Transport == "" {
			r.Fanout[i].Transport = transportH2
		}
	}
	return &r, nil
}

// violations lists what a correct server must never do and this run saw.
func (r *result) violations() []string {
	var v []string
	type namedRound struct {
		name string
		f    *fanoutResult
	}
	var fanout []namedRound
	for i := range r.Fanout {
		fanout = append(fanout, namedRound{r.Fanout[i].round().name(), &r.Fanout[i]})
	}
	if r.Scale != nil {
		for i := range r.Scale.Steps {
			st := &r.Scale.Steps[i]
			for j := range st.Fanout {
				fanout = append(fanout, namedRound{st.name() + " " + st.Fanout[j].round().name(), &st.Fanout[j]})
			}
		}
	}
	for _, nf := range fanout {
		e, f := nf.f.Events, nf.f
		if e.Missing != 0 || e.Duplicates != 0 || e.OutOfOrder != 0 || e.Unexpected != 0 {
			v = append(v, fmt.Sprintf("%s: missing %d, duplicates %d, out of order %d, unexpected %d", nf.name, e.Missing, e.Duplicates, e.OutOfOrder, e.Unexpected))
		}
		if f.Dropped != 0 {
			v = append(v, fmt.Sprintf("%s: %d watchers dropped", nf.name, f.Dropped))
		}
	}
	if i := r.Idle; i != nil && (i.Dropped != 0 || i.MarkerSawAfterHold != int64(i.Watchers)) {
		v = append(v, fmt.Sprintf("idle: %d dropped, %d/%d still delivering after the hold", i.Dropped, i.MarkerSawAfterHold, i.Watchers))
	}
	for name, why := range r.Failures {
		v = append(v, name+": "+why)
	}
	return v
}

// print writes a human summary of one run.
func (r *result) print(w io.Writer) {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	defer tw.Flush()
	row := func(k, format string, args ...any) { fmt.Fprintf(tw, "  %s\t%s\n", k, fmt.Sprintf(format, args...)) }
	fmt.Fprintf(tw, "%s  %s  %s\n", r.Label, r.Server, r.Resource)
	if b := r.Baseline; b != nil {
		row("baseline", "1 KiB loopback write %s, TLS write %s, encoding/json encode (%d B) %s, json-iterator decode %s",
			us(b.LoopbackWrite), us(b.TLSWrite), b.ObjectBytes, us(b.JSONEncode), us(b.JSONDecode))
	}
	for _, f := range r.Fanout {
		e := f.Events
		row(f.round().name(), "%d watchers over %s on %d connections, opened in %v", f.Watchers, f.Transport, f.Connections, f.OpenTime.Round(time.Millisecond))
		row("  writes", "%d acknowledged of %d at %.1f/s (target %.1f/s), %d errors, write latency p50 %s p99 %s",
			f.Writer.Acknowledged, f.Writer.Attempted, f.Writer.Rate, f.TargetRate, f.Writer.Errors, ms(f.Writer.Latency.P50), ms(f.Writer.Latency.P99))
		row("  events", "%d delivered of %d expected; missing %d, duplicates %d, out of order %d, unexpected %d; dropped watchers %d",
			e.Delivered, e.Expected, e.Missing, e.Duplicates, e.OutOfOrder, e.Unexpected, f.Dropped)
		row("  write→all", "p50 %s  p99 %s  max %s  (%d writes complete)", ms(e.AllReceived.P50), ms(e.AllReceived.P99), ms(e.AllReceived.Max), e.AllReceived.Count)
		row("  cpu", "server %s over %v = %s per delivered event; load generator %.2fs", cpuString(cpuSpan{f.ServerCPU, f.ServerCPUPerProcess}), f.Window.Round(time.Millisecond), us(f.CPUPerEvent), f.LoadGenCPU.Seconds())
		if r.Baseline != nil && r.Baseline.LoopbackWrite > 0 && f.CPUPerEvent > 0 {
			row("  vs baseline", "%.1f× a loopback write, %.1f× a TLS write", ratio(f.CPUPerEvent, r.Baseline.LoopbackWrite), ratio(f.CPUPerEvent, r.Baseline.TLSWrite))
		}
		printErrors(tw, f.Errors)
	}
	if i := r.Idle; i != nil {
		row("idle", "%d watchers on %d connections, opened in %v; %d delivering at open, %d after %v; dropped %d",
			i.Watchers, i.Connections, i.OpenTime.Round(time.Millisecond), i.MarkerSawAtOpen, i.MarkerSawAfterHold, i.Hold, i.Dropped)
		row("  memory", "RSS %d → %d KiB = %.1f KiB per watcher; heap %.1f KiB per watcher; %.2f goroutines per watcher",
			i.RSSBeforeKiB, i.RSSAfterKiB, i.RSSPerWatcherKiB, i.HeapPerWatcherKiB, i.GoroutinesPerWatcher)
		row("  idle cpu", "%.2fs over %v", i.IdleCPU.Seconds(), i.Hold)
		if i.LoadRSSPerWatcherKiB > 0 {
			row("  load generator", "RSS %.1f KiB per watcher", i.LoadRSSPerWatcherKiB)
		}
		printErrors(tw, i.Errors)
	}
	if l := r.List; l != nil {
		row("list", "%d objects (%d created at %.0f/s), LIST returns %d items, %d KiB%s",
			l.Objects, l.Created, l.CreateRate, l.Items, l.Bytes/1024, map[bool]string{true: " (gzip on the wire)"}[l.Compressed])
		row("  updates", "%d patched at %.0f/s", l.Updated, l.UpdateRate)
		row("  median", "RV=0 %s   consistent %s   paged by %d (%d pages) %s", ms(l.RV0.Median), ms(l.Consistent.Median), l.PageSize, l.Pages, ms(l.Paged.Median))
		row("  cpu", "creates %s   patches %s   LISTs: RV=0 %s  consistent %s  paged %s (%s)",
			cpuString(l.CreateCPU), cpuString(l.UpdateCPU), cpuString(l.RV0.CPU), cpuString(l.Consistent.CPU), cpuString(l.Paged.CPU), strings.Join(r.ProcessNames, "+"))
		if g := l.Gets; g != nil {
			row("  GET", "%d by name of each kind: consistent p50 %s p99 %s   RV=0 p50 %s p99 %s", l.GetRequests,
				us(g.Consistent.Latency.P50), us(g.Consistent.Latency.P99), us(g.RV0.Latency.P50), us(g.RV0.Latency.P99))
			row("  GET cpu", "consistent %s = %s per GET   RV=0 %s = %s per GET",
				cpuString(g.Consistent.CPU), us(g.Consistent.cpuPerGet()), cpuString(g.RV0.CPU), us(g.RV0.cpuPerGet()))
		}
		if l.CreateError != "" {
			row("  create error", "%s", l.CreateError)
		}
		if l.GetError != "" {
			row("  GET error", "%s", l.GetError)
		}
		if l.UpdateError != "" {
			row("  update error", "%s", l.UpdateError)
		}
	}
	if fl := r.Floor; fl != nil {
		row("floor", "%d etcd puts of %d bytes (%s) with %d workers at %.0f/s, p50 %s p99 %s; %d deleted after",
			fl.Puts, fl.ValueBytes, fl.ValueSource, fl.Workers, fl.Rate, ms(fl.Latency.P50), ms(fl.Latency.P99), fl.Deleted)
		row("  cpu", "%s (%s)", cpuString(fl.CPU), strings.Join(r.ProcessNames, "+"))
		if v, ok := createsOverFloor(r); ok {
			row("  creates", "%.2f× the floor (%.0f creates/s with %d workers)", v, r.List.CreateRate, fl.Workers)
		}
		if fl.Error != "" {
			row("  error", "%s", fl.Error)
		}
	}
	if in := r.Informer; in != nil {
		for _, line := range informerRows(in) {
			row(line[0], "%s", line[1])
		}
	}
	if a := r.Admission; a != nil {
		for _, line := range admissionRows(a) {
			row(line[0], "%s", line[1])
		}
	}
	if sc := r.Scale; sc != nil {
		for _, line := range scaleRows(sc) {
			row(line[0], "%s", line[1])
		}
	}
	for name, why := range r.Failures {
		row("FAILED "+name, "%s", why)
	}
}

// cpuString renders a CPU span as its total and, for several processes,
// each one's share: "12.30s (8.10+4.20)".
func cpuString(c cpuSpan) string {
	s := fmt.Sprintf("%.2fs", c.Total.Seconds())
	if len(c.PerProcess) > 1 {
		parts := make([]string, len(c.PerProcess))
		for i, p := range c.PerProcess {
			parts[i] = fmt.Sprintf("%.2f", p.Seconds())
		}
		s += " (" + strings.Join(parts, "+") + ")"
	}
	return s
}

func printErrors(w io.Writer, errs []string) {
	for _, e := range errs {
		fmt.Fprintf(w, "  \t! %s\n", e)
	}
}

func us(d time.Duration) string { return fmt.Sprintf("%.2fµs", float64(d)/float64(time.Microsecond)) }
func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond)) }

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
