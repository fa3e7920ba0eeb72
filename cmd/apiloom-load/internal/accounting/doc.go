// Package accounting is the load generator's bookkeeping: which watcher saw
// which write and when (Tracker), and what the latencies add up to
// (Percentiles). It does no I/O, so the figures apiloom-load reports rest
// on code that ordinary unit tests cover.
package accounting
