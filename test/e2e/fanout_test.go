package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	"github.com/apiloom/apiloom/server/testserver"
)

// TestWatchFanOut: many clients watching one resource from one
// resourceVersion each see every write after it, once, in the order the
// writes were acknowledged, with the resourceVersions the writes returned;
// from the watch cache and, without it, from etcd's (or kine's) own
// watches. It logs how long the slowest watcher took to see each write,
// which on kine is the latency its polling adds, if any.
func TestWatchFanOut(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []testserver.Option
	}{
		{name: "cache"},
		{name: "no-cache", opts: []testserver.Option{testserver.WithoutWatchCache()}},
	} {
		t.Run(tc.name, func(t *testing.T) { testWatchFanOut(t, tc.opts...) })
	}
}

func testWatchFanOut(t *testing.T, opts ...testserver.Option) {
	const watchers, objects = 100, 10
	ts, cs := startServer(t, opts...)
	ts.CreateNamespaces(t, "shop")
	ctx := t.Context()
	dbs := cs.ExampleV1().Databases("shop")
	list, err := dbs.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// Each watcher notes when it saw each event; the writer when each
	// write was acknowledged.
	got := make([][]seenEvent, watchers)
	var wg sync.WaitGroup
	defer wg.Wait()
	watchCtx, stopWatching := context.WithCancel(ctx) // ends the watchers if the test fails early
	defer stopWatching()
	const events = 3 * objects
	for i := range watchers {
		w, err := dbs.Watch(watchCtx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
		if err != nil {
			t.Fatalf("watch %d: %v", i, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer w.Stop()
			deadline := time.After(60 * time.Second)
			for len(got[i]) < events {
				select {
				case ev, ok := <-w.ResultChan():
					if !ok {
						return
					}
					got[i] = append(got[i], seenEvent{event: describe(ev), at: time.Now()})
				case <-deadline:
					return
				case <-watchCtx.Done():
					return
				}
			}
		}()
	}

	var want []string
	var acked []time.Time
	record := func(typ watch.EventType, db *examplev1.Database) {
		want = append(want, fmt.Sprintf("%s %s %s", typ, db.Name, db.ResourceVersion))
		acked = append(acked, time.Now())
	}
	for i := range objects {
		db, err := dbs.Create(ctx, newDatabase(fmt.Sprintf("db-%d", i)), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		record(watch.Added, db)
		db.Spec.Replicas = 5
		if db, err = dbs.Update(ctx, db, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		record(watch.Modified, db)
	}
	for i := range objects {
		name := fmt.Sprintf("db-%d", i)
		if err := dbs.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		// A delete returns no resourceVersion through the clientset; the
		// watchers' DELETED carries the deletion's, checked below as
		// increasing and the same for every watcher.
		record(watch.Deleted, &examplev1.Database{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "?"}})
	}
	wg.Wait()

	var slowest []time.Duration // per write, the last watcher to see it
	for i, evs := range got {
		names := describeAll(evs)
		if len(names) != events {
			t.Fatalf("watcher %d saw %d events, want %d:\n%q", i, len(names), events, names)
		}
		if i > 0 && !slices.Equal(names, describeAll(got[0])) {
			t.Fatalf("watcher %d saw\n%q\nwatcher 0 saw\n%q", i, names, describeAll(got[0]))
		}
		for j, e := range evs {
			if !matches(e.event, want[j]) {
				t.Fatalf("watcher %d: event %d is %q, want %q", i, j, e.event, want[j])
			}
			if i == 0 {
				slowest = append(slowest, 0)
			}
			slowest[j] = max(slowest[j], e.at.Sub(acked[j]))
		}
	}
	assertIncreasingRVs(t, describeAll(got[0]))
	slices.Sort(slowest)
	t.Logf("%d watchers, %d writes: the last watcher saw a write after its acknowledgement in p50 %v, p99 %v, max %v",
		watchers, events, slowest[len(slowest)/2], slowest[len(slowest)*99/100], slowest[len(slowest)-1])
}

// seenEvent is a watch event as describe puts it, and when it arrived.
type seenEvent struct {
	event string
	at    time.Time
}

// describe is "TYPE name resourceVersion" of a watch event.
func describe(ev watch.Event) string {
	db, ok := ev.Object.(*examplev1.Database)
	if !ok {
		return fmt.Sprintf("%s %T", ev.Type, ev.Object)
	}
	return fmt.Sprintf("%s %s %s", ev.Type, db.Name, db.ResourceVersion)
}

func describeAll(evs []seenEvent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.event
	}
	return out
}

// matches compares a described event with a wanted one, whose
// resourceVersion "?" matches any.
func matches(got, want string) bool {
	if w, ok := strings.CutSuffix(want, " ?"); ok {
		i := strings.LastIndexByte(got, ' ')
		return i >= 0 && got[:i] == w
	}
	return got == want
}

// assertIncreasingRVs checks that the resourceVersions of described events
// increase strictly.
func assertIncreasingRVs(t *testing.T, described []string) {
	t.Helper()
	var prev int64
	for _, d := range described {
		n := atoi(t, d[strings.LastIndexByte(d, ' ')+1:])
		if n <= prev {
			t.Fatalf("resourceVersions do not increase: %q", described)
		}
		prev = n
	}
}
