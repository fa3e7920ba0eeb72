package sim

import (
	"testing"

	"github.com/apiloom/apiloom/test/robustness/history"
)

// TestRunCoverage: the generated histories hold what the checkers must
// cope with (every kind and outcome, refusals, overlapping calls, cut and
// resumed streams, bookmarks, a 410), so that a checker passing them is
// not passing empty histories; and a seed gives the same run twice.
func TestRunCoverage(t *testing.T) {
	seen := map[string]int{}
	for seed := range int64(20) {
		res := Run(Config{Seed: seed, Lost: 0.1})
		h := res.History
		var lastCall = map[int]int{}
		for i, op := range h.Operations {
			seen[string(op.Kind)]++
			seen[op.Outcome.String()]++
			if op.Code != 0 {
				seen[op.Reason]++
			}
			if op.Outcome == history.Pending {
				t.Fatalf("seed %d: %v still pending after the run", seed, op)
			}
			if i > 0 && op.Call < h.Operations[i-1].Call {
				t.Fatalf("seed %d: calls out of order", seed)
			}
			for c, j := range lastCall {
				if c != op.Client && h.Operations[j].Return > op.Call {
					seen["overlap"]++
				}
			}
			lastCall[op.Client] = i
		}
		for _, s := range h.Streams {
			seen[s.End.String()]++
			if s.Resumes != 0 {
				seen["resumed"]++
			}
			for _, e := range s.Events {
				seen[string(e.Type)]++
			}
		}
		seen["informers"] += len(h.Informers)
		if len(res.Etcd.Changes) == 0 || res.Etcd.CompactRev == 0 {
			t.Fatalf("seed %d: no changes or no compaction", seed)
		}
	}
	for _, want := range []string{"create", "update", "delete", "get", "list", "acknowledged", "failed", "unknown",
		"Conflict", "AlreadyExists", "NotFound", "Timeout", "overlap", "closed", "410 gone", "error", "resumed",
		"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "informers"} {
		if seen[want] == 0 {
			t.Errorf("20 runs hold no %q: %v", want, seen)
		}
	}
	a, b := Run(Config{Seed: 3, Lost: 0.1}), Run(Config{Seed: 3, Lost: 0.1})
	if len(a.History.Operations) != len(b.History.Operations) || len(a.Etcd.Changes) != len(b.Etcd.Changes) ||
		a.Etcd.Changes[len(a.Etcd.Changes)-1] != b.Etcd.Changes[len(b.Etcd.Changes)-1] {
		t.Fatal("one seed, two different runs")
	}
}
