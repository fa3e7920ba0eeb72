package traffic

import (
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/test/robustness/check"
	"github.com/apiloom/apiloom/test/robustness/history"
)

// ForCheckers turns what the writers, readers, watchers and informers
// recorded, and etcd's history of the namespace, into package check's
// input: keys are object names, a write's value is its operation id (the
// OpIDAnnotation it stored), a read's values the OpIDAnnotations it read,
// each watcher's segment a stream from its list's revision. The writes
// come first in the history, then the reads. It returns the operations'
// ids in the history's order (op i+1 is ids[i]), for reports.
//
// A delete's answer carries no revision (the clientset returns only an
// error), so an acknowledged delete is given the revision of etcd's
// deletion of the version its precondition named; if etcd holds no such
// deletion it keeps revision 0, which LostWrites reports as lost.
func ForCheckers(ops, reads []Op, hist []Change, watches []*Watch, informers []history.InformerState) (h history.History, e check.Etcd, ids []string) {
	ops = append(append([]Op(nil), ops...), reads...)
	var start time.Time
	for i, op := range ops {
		if i == 0 || op.Call.Before(start) {
			start = op.Call
		}
	}
	deletedAt := map[string]int64{} // name@prevRevision -> the deletion's revision
	for _, c := range hist {
		ch := check.Change{Rev: c.Revision, Key: c.Name, Delete: c.Type == watch.Deleted, Created: c.Type == watch.Added, Value: c.OpID}
		if ch.Delete {
			ch.Value = c.PrevOpID
			deletedAt[deleteKey(c.Name, c.PrevRevision)] = c.Revision
		}
		e.Changes = append(e.Changes, ch)
	}
	e.FirstRev = 1 // the scenarios run without compaction

	for i, op := range ops {
		o := history.Operation{
			ID: i + 1, Client: op.Client,
			Request: history.Request{Kind: history.Kind(op.Kind), Key: op.Name, PreconditionRV: rv(op.Precondition), Replica: op.Replica},
			Call:    op.Call.Sub(start), Return: op.Return.Sub(start),
			Outcome: [...]history.Outcome{Acknowledged: history.Acknowledged, Failed: history.Failed, Unknown: history.Unknown}[op.Outcome],
		}
		if op.Kind != Delete && !o.Kind.IsRead() {
			o.Value = op.ID
		}
		if op.Outcome == Acknowledged {
			o.RV = rv(op.ResourceVersion)
			if op.Kind == Delete {
				o.RV = deletedAt[op.Name+"@"+op.Precondition]
			}
			o.Found, o.Read, o.Items = op.Found, op.Read, op.Items
		}
		o.Err = op.Err
		h.Operations = append(h.Operations, o)
		ids = append(ids, op.ID)
	}

	for i, w := range watches {
		for _, seg := range w.Segments {
			s := history.Stream{ID: len(h.Streams) + 1, Client: 1000 + i, StartRV: seg.FromRV, End: history.Closed}
			last := seg.FromRV
			for _, ev := range seg.Events {
				s.Events = append(s.Events, history.Event{Type: history.EventType(ev.Type), Key: ev.Name, Value: ev.OpID, RV: ev.ResourceVersion})
				last = ev.ResourceVersion
			}
			if seg.EndRV > last {
				// The segment's last news was a bookmark: it promises
				// every change up to EndRV, so WatchStreams checks the tail.
				s.Events = append(s.Events, history.Event{Type: history.Bookmark, RV: seg.EndRV})
			}
			h.Streams = append(h.Streams, s)
		}
	}
	h.Informers = informers
	return h, e, ids
}

// rv parses a resourceVersion; "" and garbage are 0.
func rv(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

func deleteKey(name string, rev int64) string { return name + "@" + strconv.FormatInt(rev, 10) }
