package traffic

import (
	"fmt"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/watch"
)

// Verdict is what the minimal checks found. The checkers (package
// check) supersede them; these only prove the scenarios' basic promise.
type Verdict struct {
	Acknowledged int
	// Lost are acknowledged writes etcd's history does not hold: must be empty.
	Lost []Op
	// Phantom are failed writes etcd's history holds anyway: must be empty.
	Phantom []Op
	Unknown int
	// UnknownApplied are the unknown-outcome writes that did take effect.
	UnknownApplied int
}

// CheckWrites compares the writers' operations with etcd's history: an
// acknowledged create or update is the put at the resourceVersion it
// returned carrying its operation id; an acknowledged delete is the
// delete of the version its precondition named. A failed create or update
// must have left no put with its id. Deletes carry no id: a delete of a
// version is attributed to the acknowledged or unknown-outcome deletes of
// that version, and is phantom only when only failed deletes named it
// (two clients deleting one version: one succeeds, the other gets 404).
func CheckWrites(ops []Op, hist []Change) Verdict {
	puts := map[string]Change{}  // by op id
	deletes := map[string]bool{} // by name@prevRevision
	for _, c := range hist {
		if c.Type == watch.Deleted {
			deletes[deleteKey(c.Name, c.PrevRevision)] = true
		} else if c.OpID != "" {
			puts[c.OpID] = c
		}
	}
	claimed := map[string]bool{} // deletes an acknowledged or unknown op may have done
	for _, op := range ops {
		if op.Kind == Delete && op.Outcome != Failed {
			claimed[op.Name+"@"+op.Precondition] = true
		}
	}
	var v Verdict
	for _, op := range ops {
		var happened, exact bool
		if op.Kind == Delete {
			happened = deletes[op.Name+"@"+op.Precondition]
			exact = happened
		} else {
			c, ok := puts[op.ID]
			happened = ok && c.Name == op.Name
			exact = happened && strconv.FormatInt(c.Revision, 10) == op.ResourceVersion
		}
		switch op.Outcome {
		case Acknowledged:
			v.Acknowledged++
			if !exact {
				v.Lost = append(v.Lost, op)
			}
		case Failed:
			if happened && (op.Kind != Delete || !claimed[op.Name+"@"+op.Precondition]) {
				v.Phantom = append(v.Phantom, op)
			}
		case Unknown:
			v.Unknown++
			if happened {
				v.UnknownApplied++
			}
		}
	}
	return v
}

func deleteKey(name string, rev int64) string { return name + "@" + strconv.FormatInt(rev, 10) }

// CheckWatch compares each segment of w with etcd's history: the events
// must be exactly the changes in (FromRV, EndRV], in revision order, none
// missing, none twice. It returns one line per segment that differs.
func CheckWatch(w *Watch, hist []Change) []string {
	var problems []string
	for i, seg := range w.Segments {
		var want []Event
		for _, c := range hist {
			if c.Revision > seg.FromRV && c.Revision <= seg.EndRV {
				want = append(want, Event{Type: c.Type, Name: c.Name, ResourceVersion: c.Revision})
			}
		}
		if d := diffEvents(want, seg.Events); d != "" {
			problems = append(problems, fmt.Sprintf("segment %d (%d, %d]: %s", i, seg.FromRV, seg.EndRV, d))
		}
	}
	return problems
}

func diffEvents(want, got []Event) string {
	for i := range max(len(want), len(got)) {
		switch {
		case i >= len(got):
			return fmt.Sprintf("missing %d events from #%d (%v)", len(want)-i, i, want[i])
		case i >= len(want):
			return fmt.Sprintf("%d extra events from #%d (%v)", len(got)-i, i, got[i])
		case want[i].Type != got[i].Type || want[i].Name != got[i].Name || want[i].ResourceVersion != got[i].ResourceVersion:
			return fmt.Sprintf("event #%d is %s %s@%d, etcd has %s %s@%d", i, got[i].Type, got[i].Name, got[i].ResourceVersion,
				want[i].Type, want[i].Name, want[i].ResourceVersion)
		}
	}
	return ""
}

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
