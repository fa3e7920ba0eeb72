package traffic

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"
)

func TestP99(t *testing.T) {
	t0 := time.Unix(100, 0)
	var ops []Op
	for i := range 200 { // one write a millisecond, latency i ms
		call := t0.Add(time.Duration(i) * time.Millisecond)
		ops = append(ops, Op{Kind: Update, Outcome: Acknowledged, Call: call, Return: call.Add(time.Duration(i) * time.Millisecond)})
	}
	ops = append(ops,
		Op{Kind: Update, Outcome: Unknown, Call: t0, Return: t0.Add(time.Hour)},        // not acknowledged
		Op{Kind: Get, Outcome: Acknowledged, Call: t0, Return: t0.Add(time.Hour)},      // a read
		Op{Kind: Apply, Outcome: Acknowledged, Call: t0.Add(-time.Second), Return: t0}, // before the window
	)
	for _, tc := range []struct {
		from, to time.Time
		p99      time.Duration
		n        int
	}{
		// latencies 0..199 ms: rank ceil(0.99*200) = 198 is 197 ms
		{t0, time.Time{}, 197 * time.Millisecond, 200},
		// latencies 100..199 ms: rank 99 is 198 ms
		{t0.Add(100 * time.Millisecond), t0.Add(200 * time.Millisecond), 198 * time.Millisecond, 100},
		{t0.Add(time.Hour), time.Time{}, 0, 0},
	} {
		p99, n := P99(ops, tc.from, tc.to)
		if p99 != tc.p99 || n != tc.n {
			t.Errorf("P99(%v, %v) = %v over %d, want %v over %d", tc.from.Sub(t0), tc.to.Sub(t0), p99, n, tc.p99, tc.n)
		}
	}
}

func TestUnknownWrites(t *testing.T) {
	hist := []Change{{Name: "a", Type: watch.Added, Revision: 2, OpID: "c1"}, {Name: "a", Type: watch.Modified, Revision: 3, OpID: "u1"}}
	ops := []Op{
		{ID: "c1", Kind: Create, Outcome: Unknown},
		{ID: "u1", Kind: Update, Outcome: Acknowledged},
		{ID: "u2", Kind: Apply, Outcome: Unknown},
		{ID: "r1", Kind: Get, Outcome: Unknown},
	}
	if u, a := UnknownWrites(ops, hist); u != 2 || a != 1 {
		t.Fatalf("UnknownWrites = %d, %d; want 2, 1", u, a)
	}
}

func TestSecondsUnavailable(t *testing.T) {
	start := time.Unix(100, 0)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	ops := []Op{
		{Call: at(1000), Return: at(1100), Unavailable: true},  // second 1
		{Call: at(1200), Return: at(1900), Unavailable: true},  // second 1 again
		{Call: at(2500), Return: at(3000)},                     // available
		{Call: at(7900), Return: at(10100), Unavailable: true}, // seconds 7-10: a hung request
	}
	reads := []Interval{{Call: at(5000), Return: at(5100)}} // second 5
	if n := SecondsUnavailable(start, ops, reads); n != 6 {
		t.Fatalf("seconds unavailable %d, want 6", n)
	}
}
