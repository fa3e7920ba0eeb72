package check

import (
	"fmt"
	"strings"
	"time"

	"github.com/apiloom/apiloom/test/robustness/history"
)

// Failure is one broken guarantee.
type Failure struct {
	// Ops are the ids of the operations involved (history.Operation.ID).
	Ops []int
	// Stream is the id of the watch stream involved, or 0.
	Stream int
	// Key and Rev locate the failure in etcd's history, when they apply.
	Key string
	Rev int64
	// Msg says what is wrong, in a sentence.
	Msg string
}

func (f Failure) String() string {
	var b strings.Builder
	if len(f.Ops) > 0 {
		fmt.Fprintf(&b, "ops %v: ", f.Ops)
	}
	if f.Stream != 0 {
		fmt.Fprintf(&b, "stream %d: ", f.Stream)
	}
	b.WriteString(f.Msg)
	return b.String()
}

// Report is what one checker found.
type Report struct {
	// Checker names the checker.
	Checker string
	// Checked counts what the checker examined (acknowledged writes,
	// streams, keys, informers), for the scenario's figures.
	Checked int
	// Skipped counts what it could not examine, with the reasons in
	// Notes (history compacted before a stream's start, a linearizability
	// check that timed out).
	Skipped int
	Notes   []string
	// Failures lists every broken guarantee; none means the check passed.
	Failures []Failure
}

// OK reports whether the check passed.
func (r *Report) OK() bool { return len(r.Failures) == 0 }

func (r *Report) fail(f Failure) { r.Failures = append(r.Failures, f) }

func (r *Report) failf(f Failure, format string, args ...any) {
	f.Msg = fmt.Sprintf(format, args...)
	r.fail(f)
}

func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d checked, %d skipped, %d failures", r.Checker, r.Checked, r.Skipped, len(r.Failures))
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "\n  note: %s", n)
	}
	for _, f := range r.Failures {
		fmt.Fprintf(&b, "\n  %s", f)
	}
	return b.String()
}

// FailedOps returns the ids of every operation the report names.
func (r *Report) FailedOps() map[int]bool {
	ids := map[int]bool{}
	for _, f := range r.Failures {
		for _, id := range f.Ops {
			ids[id] = true
		}
	}
	return ids
}

// All runs every checker over a scenario's history and etcd's, in the
// order LostWrites, WatchStreams, Linearizable (with linearizableTimeout
// per key), Snapshots, Converged, ReadYourWrites.
func All(h history.History, e Etcd, linearizableTimeout time.Duration) []Report {
	return []Report{
		LostWrites(h, e),
		WatchStreams(h, e),
		Linearizable(h, linearizableTimeout),
		Snapshots(h, e),
		Converged(h, e),
		ReadYourWrites(h, e),
	}
}
