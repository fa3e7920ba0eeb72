package accounting

import (
	"slices"
	"time"
)

// Latencies summarises a set of durations. The zero value means no samples.
type Latencies struct {
	Count int           `json:"count"`
	P50   time.Duration `json:"p50"`
	P99   time.Duration `json:"p99"`
	Max   time.Duration `json:"max"`
	Mean  time.Duration `json:"mean"`
}

// Summarize computes Latencies over samples with nearest-rank percentiles
// (the smallest sample at or above the given fraction of the sorted set),
// so a reported p99 is always a latency that really happened. samples is
// sorted in place.
func Summarize(samples []time.Duration) Latencies {
	if len(samples) == 0 {
		return Latencies{}
	}
	slices.Sort(samples)
	var sum time.Duration
	for _, s := range samples {
		sum += s
	}
	return Latencies{
		Count: len(samples),
		P50:   Percentile(samples, 0.50),
		P99:   Percentile(samples, 0.99),
		Max:   samples[len(samples)-1],
		Mean:  sum / time.Duration(len(samples)),
	}
}

// Percentile returns the nearest-rank q-quantile (0 < q <= 1) of sorted,
// which must be sorted ascending and non-empty. q <= 0 gives the minimum.
func Percentile(sorted []time.Duration, q float64) time.Duration {
	n := len(sorted)
	if q <= 0 {
		return sorted[0]
	}
	if q >= 1 {
		return sorted[n-1]
	}
	// rank = ceil(q*n), 1-based; computed in integers where q*n is exact
	// enough, guarding the float against landing one past an exact rank.
	rank := int(q * float64(n))
	if float64(rank) < q*float64(n) {
		rank++
	}
	if rank < 1 {
		rank = 1
	}
	return sorted[rank-1]
}

// Median returns the middle of samples (the lower middle for an even
// count), sorting samples in place; zero for none.
func Median(samples []time.Duration) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	slices.Sort(samples)
	return samples[(len(samples)-1)/2]
}
