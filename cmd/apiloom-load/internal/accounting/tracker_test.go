package accounting

import (
	"sync"
	"testing"
	"time"
)

func TestTrackerAllDelivered(t *testing.T) {
	tr := NewTracker(3, 4)
	for seq := range 4 {
		tr.Written(seq, int64(seq*100))
	}
	rv := uint64(10)
	for seq := range 4 {
		rv++
		for w := range 3 {
			// the last watcher receives each write w*10 ns after the first
			tr.Observe(w, seq, rv, int64(seq*100+5+w*10))
		}
	}
	r := tr.Report()
	if r.Writes != 4 || r.Expected != 12 || r.Delivered != 12 || r.Missing != 0 {
		t.Fatalf("counts: %+v", r)
	}
	if r.Duplicates != 0 || r.OutOfOrder != 0 || r.Unexpected != 0 || r.Incomplete != 0 || r.WatchersWithGaps != 0 {
		t.Fatalf("errors where none happened: %+v", r)
	}
	if r.AllReceived.Count != 4 || r.AllReceived.Max != 25 || r.AllReceived.P50 != 25 {
		t.Fatalf("latency: %+v, want every write complete after 25ns", r.AllReceived)
	}
}

func TestTrackerMissingDuplicateOutOfOrder(t *testing.T) {
	tr := NewTracker(2, 3)
	tr.Written(0, 0)
	tr.Written(1, 0)
	tr.Written(2, 0)
	// watcher 0: all three, seq 1 twice (a duplicate with a repeated RV)
	tr.Observe(0, 0, 5, 1)
	tr.Observe(0, 1, 6, 2)
	tr.Observe(0, 1, 6, 3)
	tr.Observe(0, 2, 7, 4)
	// watcher 1: misses seq 1; an untracked event in between keeps order
	tr.Observe(1, 0, 5, 1)
	tr.Observe(1, -1, 8, 2)
	tr.Observe(1, 2, 7, 3) // RV went backwards
	r := tr.Report()
	if r.Delivered != 5 || r.Missing != 1 || r.MaxMissingPerWatcher != 1 || r.WatchersWithGaps != 1 {
		t.Fatalf("missing accounting: %+v", r)
	}
	if r.Duplicates != 1 || r.MaxDuplicatesPerWatcher != 1 {
		t.Fatalf("duplicate accounting: %+v", r)
	}
	if r.OutOfOrder != 2 {
		t.Fatalf("OutOfOrder = %d, want 2 (watcher 0's repeat, watcher 1's step back)", r.OutOfOrder)
	}
	if r.Incomplete != 1 || r.AllReceived.Count != 2 {
		t.Fatalf("incomplete writes must leave the latency set: %+v", r)
	}
}

func TestTrackerUnacknowledgedAndOutOfRange(t *testing.T) {
	tr := NewTracker(1, 2)
	tr.Written(0, 0)
	tr.Observe(0, 0, 1, 1)
	tr.Observe(0, 1, 2, 2) // write 1 was never acknowledged
	tr.Observe(0, 9, 3, 3) // beyond the tracked range
	r := tr.Report()
	if r.Writes != 1 || r.Delivered != 1 || r.Missing != 0 {
		t.Fatalf("acknowledged accounting: %+v", r)
	}
	if r.Unexpected != 2 {
		t.Fatalf("Unexpected = %d, want 2", r.Unexpected)
	}
	if tr.Delivered() != 2 {
		t.Fatalf("Delivered() = %d, want 2 first receipts in range", tr.Delivered())
	}
}

// TestTrackerConcurrentWatchers runs one goroutine per watcher, as the load
// generator does, so that -race checks the ownership rules.
func TestTrackerConcurrentWatchers(t *testing.T) {
	const watchers, writes = 8, 200
	tr := NewTracker(watchers, writes)
	for seq := range writes {
		tr.Written(seq, int64(seq))
	}
	var wg sync.WaitGroup
	for w := range watchers {
		wg.Go(func() {
			for seq := range writes {
				tr.Observe(w, seq, uint64(seq+1), int64(seq+w+1))
			}
		})
	}
	wg.Wait()
	r := tr.Report()
	if r.Delivered != watchers*writes || r.Missing != 0 || r.Incomplete != 0 {
		t.Fatalf("%+v", r)
	}
	if r.AllReceived.Max != time.Duration(watchers) {
		t.Fatalf("max latency %v, want %v", r.AllReceived.Max, time.Duration(watchers))
	}
}
