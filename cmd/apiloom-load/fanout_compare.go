package main

// fanoutKeys are the distinct fan-out rounds of the runs, in the order
// they first appear.
func fanoutKeys(runs []*result) []fanoutRound {
	var keys []fanoutRound
	seen := map[fanoutRound]bool{}
	for _, r := range runs {
		for i := range r.Fanout {
			k := r.Fanout[i].round()
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// of returns the run's round k.
func (k fanoutRound) of(r *result) (*fanoutResult, bool) {
	for i := range r.Fanout {
		if r.Fanout[i].round() == k {
			return &r.Fanout[i], true
		}
	}
	return nil, false
}

// fanoutMetrics are the comparison rows of the fan-out rounds the runs
// hold, each row named after its round ("fanout 1000 h2 …"), so that
// runs line up by watchers and transport.
func fanoutMetrics(runs []*result) []metric {
	var out []metric
	for _, k := range fanoutKeys(runs) {
		row := func(name, format string, f func(*fanoutResult) float64) metric {
			return metric{k.name() + " " + name, func(r *result) (float64, bool) {
				x, ok := k.of(r)
				if !ok {
					return 0, false
				}
				return f(x), true
			}, format}
		}
		out = append(out,
			row("connections", "%.0f", func(f *fanoutResult) float64 { return float64(f.Connections) }),
			row("writes/s achieved", "%.1f", func(f *fanoutResult) float64 { return f.Writer.Rate }),
			row("events delivered", "%.0f", func(f *fanoutResult) float64 { return float64(f.Events.Delivered) }),
			row("missing+dup+disorder", "%.0f", func(f *fanoutResult) float64 {
				return float64(f.Events.Missing + f.Events.Duplicates + f.Events.OutOfOrder + f.Events.Unexpected)
			}),
			row("watchers dropped", "%.0f", func(f *fanoutResult) float64 { return float64(f.Dropped) }),
			row("write→all p50 ms", "%.1f", func(f *fanoutResult) float64 { return msOf(f.Events.AllReceived.P50) }),
			row("write→all p99 ms", "%.1f", func(f *fanoutResult) float64 { return msOf(f.Events.AllReceived.P99) }),
			row("write→all max ms", "%.1f", func(f *fanoutResult) float64 { return msOf(f.Events.AllReceived.Max) }),
			row("write latency p50 ms", "%.1f", func(f *fanoutResult) float64 { return msOf(f.Writer.Latency.P50) }),
			row("server CPU s", "%.2f", func(f *fanoutResult) float64 { return f.ServerCPU.Seconds() }),
			row("server CPU µs/event", "%.2f", func(f *fanoutResult) float64 { return usOf(f.CPUPerEvent) }),
			metric{k.name() + " CPU/event ÷ loopback write", func(r *result) (float64, bool) {
				x, ok := k.of(r)
				if !ok || r.Baseline == nil || r.Baseline.LoopbackWrite == 0 {
					return 0, false
				}
				return ratio(x.CPUPerEvent, r.Baseline.LoopbackWrite), true
			}, "%.1f"},
			row("load generator CPU s", "%.2f", func(f *fanoutResult) float64 { return f.LoadGenCPU.Seconds() }),
		)
	}
	return out
}
