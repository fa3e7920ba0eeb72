//go:build apiloom_failpoints

package failpoint

import (
	"sync"
	"sync/atomic"
	"testing"
)

func TestParse(t *testing.T) {
	p, err := parse(" watchDropEvent=3; ;ackWithoutCommit=1")
	if err != nil {
		t.Fatal(err)
	}
	if len(p) != 2 || p[WatchDropEvent].at != 3 || p[AckWithoutCommit].at != 1 {
		t.Fatalf("parse = %v", p)
	}
	for _, bad := range []string{"watchDropEvent", "nope=1", "watchDropEvent=0", "watchDropEvent=x", "watchDropEvent=1;watchDropEvent=2"} {
		if _, err := parse(bad); err == nil {
			t.Errorf("parse(%q) accepted", bad)
		}
	}
}

// TestFireOnce: of many concurrent evaluations exactly one fires, the Nth;
// a failpoint not armed never fires.
func TestFireOnce(t *testing.T) {
	p, err := parse("staleConsistentRead=50")
	if err != nil {
		t.Fatal(err)
	}
	saved := armed
	armed = p
	t.Cleanup(func() { armed = saved })
	var fired atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				if Fire(StaleConsistentRead) {
					fired.Add(1)
				}
				if Fire(WatchDropEvent) {
					t.Error("an unarmed failpoint fired")
				}
			}
		})
	}
	wg.Wait()
	if fired.Load() != 1 {
		t.Fatalf("fired %d times, want 1", fired.Load())
	}
}
