package traffic

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/generated/clientset/versioned"
)

// Event is one watch event as received.
type Event struct {
	Type            watch.EventType
	Name            string
	ResourceVersion int64
	OpID            string
}

// Segment is what a watcher saw between two relists: the list's
// resourceVersion, then every event until EndRV (the last event or
// bookmark). A gap-free watch delivers exactly etcd's changes to the
// namespace in (FromRV, EndRV], resumed watches included.
type Segment struct {
	FromRV, EndRV int64
	Events        []Event
}

// Watch is one watcher's record. Its fields belong to its watcher until
// RunWatchers returns; meanwhile LastRV tells how far it got.
type Watch struct {
	Replica  int
	Segments []Segment
	// Resumes counts watches reopened from the last resourceVersion seen;
	// Relists counts lists after a 410 Gone (each starts a Segment).
	Resumes, Relists int

	lastRV atomic.Int64 // the current segment's EndRV
}

// LastRV is the resourceVersion of the last list, event or bookmark the
// watcher received; safe while it runs.
func (w *Watch) LastRV() int64 { return w.lastRV.Load() }

// NewWatches returns n watcher records, watcher i on replica i % replicas.
func NewWatches(n, replicas int) []*Watch {
	out := make([]*Watch, n)
	for i := range out {
		out[i] = &Watch{Replica: i % replicas}
	}
	return out
}

// RunWatchers runs a watcher of cfg.Namespace for each record until ctx
// ends, each on the clientset of its replica.
func RunWatchers(ctx context.Context, cfg Config, watches []*Watch, clients []versioned.Interface) {
	var wg sync.WaitGroup
	for _, w := range watches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run(ctx, cfg, clients[w.Replica])
		}()
	}
	wg.Wait()
}

// run lists, then watches from the list's resourceVersion; a watch that
// ends is resumed from the last resourceVersion seen, one refused with
// 410 Gone starts over with a list.
func (w *Watch) run(ctx context.Context, cfg Config, client versioned.Interface) {
	dbs := client.ExampleV1().Databases(cfg.Namespace)
	retry := time.NewTicker(cfg.Interval * 10)
	defer retry.Stop()
	listed := false
	for ctx.Err() == nil {
		if !listed {
			lctx, cancel := context.WithTimeout(ctx, cfg.OpTimeout)
			l, err := dbs.List(lctx, metav1.ListOptions{})
			cancel()
			if err != nil {
				wait(ctx, retry)
				continue
			}
			rv, _ := strconv.ParseInt(l.ResourceVersion, 10, 64)
			if len(w.Segments) > 0 {
				w.Relists++
			}
			w.Segments = append(w.Segments, Segment{FromRV: rv, EndRV: rv})
			w.lastRV.Store(rv)
			listed = true
		}
		seg := &w.Segments[len(w.Segments)-1]
		wi, err := dbs.Watch(ctx, metav1.ListOptions{ResourceVersion: strconv.FormatInt(seg.EndRV, 10), AllowWatchBookmarks: true})
		if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
			listed = false
			continue
		}
		if err != nil {
			wait(ctx, retry)
			continue
		}
		gone := w.consume(wi, seg)
		wi.Stop()
		if gone {
			listed = false
			continue
		}
		if ctx.Err() == nil {
			w.Resumes++
		}
	}
}

// consume records wi's events into seg until the stream ends; it reports
// whether the stream ended with 410 Gone.
func (w *Watch) consume(wi watch.Interface, seg *Segment) (gone bool) {
	for ev := range wi.ResultChan() {
		if ev.Type == watch.Error {
			err := apierrors.FromObject(ev.Object)
			return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
		}
		m, err := meta.Accessor(ev.Object)
		if err != nil {
			continue
		}
		rv, _ := strconv.ParseInt(m.GetResourceVersion(), 10, 64)
		if ev.Type != watch.Bookmark {
			seg.Events = append(seg.Events, Event{Type: ev.Type, Name: m.GetName(), ResourceVersion: rv, OpID: m.GetAnnotations()[OpIDAnnotation]})
		}
		seg.EndRV = rv
		w.lastRV.Store(rv)
	}
	return false
}

func wait(ctx context.Context, t *time.Ticker) {
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
