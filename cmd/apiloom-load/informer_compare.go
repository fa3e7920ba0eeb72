package main

import "fmt"

// informerKey identifies comparable informer rounds across runs: the same
// object count, format and mode.
type informerKey struct {
	objects   int
	format    string
	watchList bool
}

func (k informerKey) label() string {
	r := informerRound{Objects: k.objects, Format: k.format, WatchList: k.watchList}
	return fmt.Sprintf("informer %d %s %s", k.objects, k.format, r.mode())
}

// round returns the run's successful round for k.
func (k informerKey) round(r *result) (*informerRound, bool) {
	if r.Informer == nil {
		return nil, false
	}
	for i := range r.Informer.Rounds {
		x := &r.Informer.Rounds[i]
		if x.Objects == k.objects && x.Format == k.format && x.WatchList == k.watchList && x.Error == "" {
			return x, true
		}
	}
	return nil, false
}

// informerKeys are the distinct round settings of the runs, in the order
// they first appear.
func informerKeys(runs []*result) []informerKey {
	var keys []informerKey
	seen := map[informerKey]bool{}
	for _, r := range runs {
		if r.Informer == nil {
			continue
		}
		for _, x := range r.Informer.Rounds {
			k := informerKey{x.Objects, x.Format, x.WatchList}
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// informerMetrics are the comparison rows of the informer rounds the runs
// hold: sync time, server CPU per sync and peak RSS for each setting. A
// failed round has no figure (its failure is listed under the table).
func informerMetrics(runs []*result) []metric {
	var out []metric
	for _, k := range informerKeys(runs) {
		of := func(f func(*informerRound) float64) func(*result) (float64, bool) {
			return func(r *result) (float64, bool) {
				x, ok := k.round(r)
				if !ok {
					return 0, false
				}
				return f(x), true
			}
		}
		out = append(out,
			metric{k.label() + " sync ms", of(func(x *informerRound) float64 { return msOf(x.Median) }), "%.1f"},
			metric{k.label() + " server CPU ms/sync", of(func(x *informerRound) float64 { return msOf(x.cpuPerSync()) }), "%.0f"},
			metric{k.label() + " server peak RSS MiB", of(func(x *informerRound) float64 { return float64(x.PeakRSSKiB) / 1024 }), "%.1f"},
		)
	}
	return out
}
