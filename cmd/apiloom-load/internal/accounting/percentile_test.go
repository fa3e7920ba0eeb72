package accounting

import (
	"testing"
	"time"
)

func ms(v ...int) []time.Duration {
	out := make([]time.Duration, len(v))
	for i, x := range v {
		out[i] = time.Duration(x) * time.Millisecond
	}
	return out
}

func TestPercentileNearestRank(t *testing.T) {
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond
	}
	cases := []struct {
		name   string
		sorted []time.Duration
		q      float64
		want   time.Duration
	}{
		{"single", ms(7), 0.99, 7 * time.Millisecond},
		{"p50 of 100", hundred, 0.50, 50 * time.Millisecond},
		{"p99 of 100", hundred, 0.99, 99 * time.Millisecond},
		{"p999 of 100 is the max", hundred, 0.999, 100 * time.Millisecond},
		{"p50 of 4 rounds up", ms(1, 2, 3, 4), 0.50, 2 * time.Millisecond},
		{"p51 of 4", ms(1, 2, 3, 4), 0.51, 3 * time.Millisecond},
		{"p99 of 10", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 0.99, 10 * time.Millisecond},
		{"q 0 is the min", ms(3, 4), 0, 3 * time.Millisecond},
		{"q 1 is the max", ms(3, 4), 1, 4 * time.Millisecond},
	}
	for _, c := range cases {
		if got := Percentile(c.sorted, c.q); got != c.want {
			t.Errorf("%s: Percentile(q=%v) = %v, want %v", c.name, c.q, got, c.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	if got := Summarize(nil); got != (Latencies{}) {
		t.Fatalf("Summarize(nil) = %+v, want zero", got)
	}
	got := Summarize(ms(9, 1, 5, 3, 7))
	want := Latencies{Count: 5, P50: 5 * time.Millisecond, P99: 9 * time.Millisecond, Max: 9 * time.Millisecond, Mean: 5 * time.Millisecond}
	if got != want {
		t.Fatalf("Summarize = %+v, want %+v", got, want)
	}
}

func TestMedian(t *testing.T) {
	if got := Median(nil); got != 0 {
		t.Fatalf("Median(nil) = %v", got)
	}
	if got := Median(ms(30, 10, 20)); got != 20*time.Millisecond {
		t.Fatalf("Median odd = %v", got)
	}
	if got := Median(ms(40, 10, 30, 20)); got != 20*time.Millisecond {
		t.Fatalf("Median even = %v, want the lower middle", got)
	}
}
