package kine

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	"github.com/apiloom/apiloom/generated/clientset/versioned"
)

// outcome is what a client learned from one write.
type outcome int

const (
	acked   outcome = iota // 2xx: the server says it is stored
	failed                 // a Status the server chose: nothing was stored, or it says it cannot tell (5xx)
	unknown                // no answer (timeout, broken connection): stored or not
)

// classify sorts a write's error into an outcome. A 504 Timeout or a
// client-side deadline is unknown: the write may have committed after the
// server gave up waiting. Every other Status is failed; the check below
// still allows either result for those, as a 500 after a commit whose
// answer the database lost is possible too, but counts them apart.
func classify(err error) outcome {
	var st apierrors.APIStatus
	switch {
	case err == nil:
		return acked
	case errors.Is(err, context.DeadlineExceeded), apierrors.IsTimeout(err):
		return unknown
	case errors.As(err, &st):
		return failed
	default: // the connection broke, or no Status came
		return unknown
	}
}

// writeLog records every write the writers made, by object.
type writeLog struct {
	mu sync.Mutex // guards everything below
	// acked is the highest "seq" label acknowledged per object name; an
	// object whose create was acknowledged has at least 0.
	acked map[string]int
	// attempted is the highest seq any write of the object carried, acked
	// or not: a stored object never has a higher one.
	attempted map[string]int
	counts    [3]int
	// statuses counts the failures by "code reason: message".
	statuses map[string]int
	// firstFail and firstOKAfter bound the unavailability: the first write
	// that failed, and the first acknowledged after restarted (when
	// pg_start returned; zero before).
	firstFail, firstOKAfter, restarted time.Time
	// slowestFail is the longest a write took to fail.
	slowestFail time.Duration
	// below500 counts failures with a Status under 500: while the database
	// is down nothing is the client's fault.
	below500 int
}

// markRestarted notes that the database is back from now on.
func (l *writeLog) markRestarted() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.restarted = time.Now()
}

func newWriteLog() *writeLog {
	return &writeLog{acked: map[string]int{}, attempted: map[string]int{}, statuses: map[string]int{}}
}

// attempt notes a write of name with seq before it is sent.
func (l *writeLog) attempt(name string, seq int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.attempted[name] = max(seq, l.attempted[name])
}

// record notes the answer to a write of name with seq sent at start.
func (l *writeLog) record(name string, seq int, err error, start time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	o := classify(err)
	l.counts[o]++
	switch o {
	case acked:
		if cur, ok := l.acked[name]; !ok || seq > cur {
			l.acked[name] = seq
		}
		if !l.restarted.IsZero() && l.firstOKAfter.IsZero() {
			l.firstOKAfter = time.Now()
		}
	default:
		if l.firstFail.IsZero() {
			l.firstFail = start
		}
		l.statuses[describe(err)]++
		l.slowestFail = max(l.slowestFail, time.Since(start))
		var st apierrors.APIStatus
		if errors.As(err, &st) && st.Status().Code < 500 {
			l.below500++
		}
	}
}

// quoted matches the names and paths in a message, which describe
// replaces so that failures of the same kind count together.
var quoted = regexp.MustCompile(`"[^"]*"|/tmp/\S*`)

// describe names an error by its Status, for the log of failures.
func describe(err error) string {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return "no Status: " + quoted.ReplaceAllString(err.Error(), "…")
	}
	s := st.Status()
	msg := quoted.ReplaceAllString(s.Message, "…")
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	return fmt.Sprintf("%d %s: %s", s.Code, s.Reason, msg)
}

// writer creates objects "<id>-<n>" and keeps updating "<id>", whose seq
// label counts up, until ctx ends. Each request has timeout as deadline.
func writer(ctx context.Context, cs versioned.Interface, ns, id string, timeout time.Duration, log *writeLog) {
	dbs := cs.ExampleV1().Databases(ns)
	var counter *examplev1.Database // the last version of id we know
	for n := 1; ctx.Err() == nil; n++ {
		name := fmt.Sprintf("%s-%d", id, n)
		start := time.Now()
		log.attempt(name, 0)
		rctx, cancel := context.WithTimeout(ctx, timeout)
		_, err := dbs.Create(rctx, newDatabase(name, 0), metav1.CreateOptions{})
		cancel()
		log.record(name, 0, err, start) // cut off by the end of the test: unknown
		if ctx.Err() != nil {
			return
		}

		start = time.Now()
		log.attempt(id, n)
		rctx, cancel = context.WithTimeout(ctx, timeout)
		if counter == nil {
			var created *examplev1.Database
			created, err = dbs.Create(rctx, newDatabase(id, n), metav1.CreateOptions{})
			if err == nil {
				counter = created
			} else if apierrors.IsAlreadyExists(err) { // an earlier create of unknown outcome landed
				if got, gerr := dbs.Get(rctx, id, metav1.GetOptions{}); gerr == nil {
					counter = got
				}
				cancel()
				continue
			}
		} else {
			next := counter.DeepCopy()
			next.Labels["seq"] = strconv.Itoa(n)
			var updated *examplev1.Database
			updated, err = dbs.Update(rctx, next, metav1.UpdateOptions{})
			if err == nil {
				counter = updated
			} else if apierrors.IsConflict(err) { // an earlier update of unknown outcome landed
				if got, gerr := dbs.Get(rctx, id, metav1.GetOptions{}); gerr == nil {
					counter = got
				}
				cancel()
				continue
			}
		}
		cancel()
		log.record(id, n, err, start)
		if ctx.Err() != nil {
			return
		}
		if err != nil && counter != nil && classify(err) != acked {
			// Refresh what we know before the next update.
			gctx, gcancel := context.WithTimeout(ctx, timeout)
			if got, gerr := dbs.Get(gctx, id, metav1.GetOptions{}); gerr == nil {
				counter = got
			}
			gcancel()
		}
		if err != nil {
			// Do not spin while the database is down.
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}

func newDatabase(name string, seq int) *examplev1.Database {
	return &examplev1.Database{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"seq": strconv.Itoa(seq)}},
		Spec:       examplev1.DatabaseSpec{Engine: "postgres", Version: "16.4", Replicas: 1, StorageGiB: 10},
	}
}

// rawWatcher follows a plain watch of ns from rv, resuming from the last
// revision it saw when the watch ends and relisting on 410 Gone, and keeps
// the objects it knows by name with their resourceVersions.
type rawWatcher struct {
	mu       sync.Mutex // guards the fields below
	objects  map[string]string
	rv       string
	resumes  int // watches started again from the last revision
	relists  int // 410 Gone answered by a new list
	watchErr []string
}

func (w *rawWatcher) run(ctx context.Context, cs versioned.Interface, ns string) {
	dbs := cs.ExampleV1().Databases(ns)
	for ctx.Err() == nil {
		w.mu.Lock()
		rv := w.rv
		w.mu.Unlock()
		if rv == "" {
			list, err := dbs.List(ctx, metav1.ListOptions{})
			if err != nil {
				pause(ctx)
				continue
			}
			w.mu.Lock()
			w.objects = map[string]string{}
			for _, d := range list.Items {
				w.objects[d.Name] = d.ResourceVersion
			}
			w.rv = list.ResourceVersion
			w.mu.Unlock()
			continue
		}
		wi, err := dbs.Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
		if err != nil {
			w.note(err.Error())
			if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
				w.relist()
			}
			pause(ctx)
			continue
		}
		w.follow(wi)
		wi.Stop()
		w.mu.Lock()
		w.resumes++
		w.mu.Unlock()
	}
}

func (w *rawWatcher) follow(wi watch.Interface) {
	for ev := range wi.ResultChan() {
		if ev.Type == watch.Error {
			err := apierrors.FromObject(ev.Object)
			w.note("watch event: " + err.Error())
			if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
				w.relist()
			}
			return
		}
		d, ok := ev.Object.(*examplev1.Database)
		if !ok {
			continue
		}
		w.mu.Lock()
		switch ev.Type {
		case watch.Added, watch.Modified:
			w.objects[d.Name] = d.ResourceVersion
		case watch.Deleted:
			delete(w.objects, d.Name)
		}
		w.rv = d.ResourceVersion
		w.mu.Unlock()
	}
}

func (w *rawWatcher) relist() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.rv = ""
	w.relists++
}

func (w *rawWatcher) note(s string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.watchErr) < 20 {
		w.watchErr = append(w.watchErr, s)
	}
}

func (w *rawWatcher) snapshot() map[string]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]string, len(w.objects))
	for k, v := range w.objects {
		out[k] = v
	}
	return out
}

func pause(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-time.After(200 * time.Millisecond):
	}
}

// diff describes how got differs from want (name -> resourceVersion),
// "" when they agree.
func diff(want, got map[string]string) string {
	var out []string
	for k, v := range want {
		if g, ok := got[k]; !ok {
			out = append(out, "missing "+k)
		} else if g != v {
			out = append(out, fmt.Sprintf("%s at %s, want %s", k, g, v))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			out = append(out, "extra "+k)
		}
	}
	sort.Strings(out)
	if len(out) > 5 {
		out = append(out[:5], fmt.Sprintf("... %d more", len(out)-5))
	}
	return fmt.Sprint(out)[1 : len(fmt.Sprint(out))-1]
}
