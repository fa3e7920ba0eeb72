package traffic

import (
	"math"
	"slices"
	"time"
)

// P99 is the 99th percentile (nearest rank) of the latency of the
// acknowledged writes called in [from, to), and how many there were; 0
// when there were none. A zero to means no upper bound.
func P99(ops []Op, from, to time.Time) (p99 time.Duration, n int) {
	var lat []time.Duration
	for _, op := range ops {
		if op.Outcome != Acknowledged || !isWrite(op.Kind) || op.Call.Before(from) || (!to.IsZero() && !op.Call.Before(to)) {
			continue
		}
		lat = append(lat, op.Return.Sub(op.Call))
	}
	if len(lat) == 0 {
		return 0, 0
	}
	slices.Sort(lat)
	return lat[int(math.Ceil(0.99*float64(len(lat))))-1], len(lat)
}

// UnknownWrites counts the writes whose outcome is unknown, and those of
// them that took effect: a create, update or apply whose op id etcd's
// history holds. (An unknown delete's effect cannot be told from another
// delete of the same version; it is not counted as taking effect.)
func UnknownWrites(ops []Op, hist []Change) (unknown, applied int) {
	put := map[string]bool{}
	for _, c := range hist {
		if c.OpID != "" {
			put[c.OpID] = true
		}
	}
	for _, op := range ops {
		if op.Outcome == Unknown && isWrite(op.Kind) {
			unknown++
			if put[op.ID] {
				applied++
			}
		}
	}
	return unknown, applied
}

func isWrite(k Kind) bool { return k == Create || k == Update || k == Delete || k == Apply }

// SecondsUnavailable counts the distinct seconds since start during
// which some client was in a request that found the service unavailable
// (a write or read ending in a transport error, 429 or 5xx): a request
// that hung 5 s before timing out covers the 5 or 6 seconds it spans.
func SecondsUnavailable(start time.Time, ops []Op, readFailures []Interval) int {
	secs := map[int64]bool{}
	cover := func(iv Interval) {
		for s := int64(iv.Call.Sub(start) / time.Second); s <= int64(iv.Return.Sub(start)/time.Second); s++ {
			secs[s] = true
		}
	}
	for _, op := range ops {
		if op.Unavailable {
			cover(Interval{Call: op.Call, Return: op.Return})
		}
	}
	for _, iv := range readFailures {
		cover(iv)
	}
	return len(secs)
}
