package cache

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
	"github.com/apiloom/apiloom/server/wire"
)

// payload makes a Widget about 1 KiB as JSON.
var payload = strings.Repeat("x", 800)

func benchWidget(ns, name string, rev int64, tier string) *widget {
	w := storagetest.NewWidget(ns, name, "red", "tier", tier, "app", "bench")
	w.Annotations = map[string]string{"bench.apiloom.dev/payload": payload}
	w.UID = "0b5e8f3a-5d5c-4d52-9a7a-6f1f3c1d2e4f"
	w.Kind, w.APIVersion = "Widget", "storagetest.apiloom.dev/v1"
	if rev > 0 {
		w.ResourceVersion = storage.FormatResourceVersion(rev)
	}
	return w
}

// BenchmarkEncode is the baseline the fan-out is measured against: what
// encoding one 1 KiB object costs, which a per-watcher encoder would pay
// per delivered event.
func BenchmarkEncode(b *testing.B) {
	w := benchWidget("ns", "x", 7, "web")
	gvk := w.GroupVersionKind()
	b.ReportAllocs()
	for b.Loop() {
		raw, err := wire.EncodeObject(w, gvk)
		if err != nil {
			b.Fatal(err)
		}
		_ = wire.AppendWatchFrame(nil, "MODIFIED", raw)
	}
}

// BenchmarkFanout feeds events into a cache with N watchers reading them,
// each on its own goroutine as HTTP handlers would. It reports the cost per
// event delivered to one watcher (ns and allocations, including the one
// encoding per event), and, for 100 watchers or more, the memory one idle
// watcher holds: its state plus the goroutine blocked in Next.
func BenchmarkFanout(b *testing.B) {
	for _, n := range []int{1, 100, 1000} {
		for _, selective := range []bool{false, true} {
			name := fmt.Sprintf("watchers=%d", n)
			if selective {
				name += "/selector"
			}
			b.Run(name, func(b *testing.B) { benchFanout(b, n, selective) })
		}
	}
}

func benchFanout(b *testing.B, n int, selective bool) {
	const round = 256 // events applied before waiting for every watcher
	c := newWidgetCache(b, etcdtest.Start(b), WithWindow(4*round))
	ctx, cancel := context.WithCancel(context.WithoutCancel(b.Context()))
	defer cancel()

	opts := storage.ListOptions{ResourceVersion: storage.FormatResourceVersion(c.Revision())}
	if selective {
		opts.Predicate.Label = labelSel(b, "tier=web")
	}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	type reader struct {
		w    storage.Watcher[*widget]
		seen atomic.Int64 // events received
	}
	readers := make([]*reader, n)
	var wg sync.WaitGroup
	var failed atomic.Value
	for i := range readers {
		w, err := c.Watch(ctx, opts)
		if err != nil {
			b.Fatal(err)
		}
		r := &reader{w: w}
		readers[i] = r
		wg.Add(1)
		go func() {
			defer wg.Done()
			events := storage.NewBlocking(w)
			defer events.Stop()
			var buf []storage.Event[*widget]
			for {
				var err error
				buf, err = events.Next(ctx, buf[:0])
				if err != nil {
					if ctx.Err() == nil {
						failed.Store(err)
					}
					return
				}
				r.seen.Add(int64(len(buf)))
			}
		}()
	}
	// Idle: every reader is blocked in Next. Wait until they all are.
	for runtime.NumGoroutine() < n {
		runtime.Gosched()
	}
	runtime.GC()
	var idle runtime.MemStats
	runtime.ReadMemStats(&idle)
	perWatcher := float64(int64(idle.HeapAlloc+idle.StackInuse)-int64(before.HeapAlloc+before.StackInuse)) / float64(n)

	// The events change 64 objects in turn. With a selector, an object
	// enters and leaves the selection on alternate changes, so every event
	// is delivered as an ADDED or DELETED variant built once for all.
	rev := c.Revision()
	mk := func(i int) storage.Event[*widget] {
		rev++
		tier, typ := "web", watch.Modified
		if selective && (i/64)%2 == 1 {
			tier = "db"
		}
		if i < 64 {
			typ = watch.Added
		}
		return storage.Event[*widget]{Type: typ, Object: benchWidget("ns", fmt.Sprintf("w%d", i%64), rev, tier)}
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.StopTimer()
	var mallocs uint64
	var ms runtime.MemStats
	events := make([]storage.Event[*widget], 0, round)
	for done := 0; done < b.N; {
		events = events[:0]
		for len(events) < round && done+len(events) < b.N {
			events = append(events, mk(done+len(events)))
		}
		runtime.ReadMemStats(&ms)
		m0 := ms.Mallocs
		b.StartTimer()
		for len(events) > 0 {
			k := min(16, len(events))
			if err := c.apply(events[:k]); err != nil {
				b.Fatal(err)
			}
			done += k
			events = events[k:]
		}
		for _, r := range readers {
			for r.seen.Load() < int64(done) {
				if err := failed.Load(); err != nil {
					b.Fatal(err)
				}
				runtime.Gosched()
			}
		}
		b.StopTimer()
		runtime.ReadMemStats(&ms)
		mallocs += ms.Mallocs - m0
		events = events[:cap(events)][:0]
	}
	deliveries := float64(b.N) * float64(n)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/deliveries, "ns/delivered")
	b.ReportMetric(float64(mallocs)/deliveries, "allocs/delivered")
	if n >= 100 {
		b.ReportMetric(perWatcher, "bytes/watcher")
	}
	cancel()
	wg.Wait()
}

// BenchmarkIdleWatchers measures, once, what an idle watcher holds: the
// cursor alone, and with the goroutine an HTTP handler would block in Next,
// over 10,000 watchers. The timed loop opens and stops one watcher.
func BenchmarkIdleWatchers(b *testing.B) {
	const n = 10000
	c := newWidgetCache(b, etcdtest.Start(b))
	ctx, cancel := context.WithCancel(context.WithoutCancel(b.Context()))
	defer cancel()
	opts := storage.ListOptions{ResourceVersion: storage.FormatResourceVersion(c.Revision()), AllowBookmarks: true}
	heap := func() int64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc + ms.StackInuse)
	}
	start := heap()
	ws := make([]storage.Watcher[*widget], n)
	for i := range ws {
		w, err := c.Watch(ctx, opts)
		if err != nil {
			b.Fatal(err)
		}
		ws[i] = w
	}
	cursors := heap()
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = storage.NewBlocking(w).Next(ctx, nil)
		}()
	}
	for runtime.NumGoroutine() < n {
		runtime.Gosched()
	}
	blocked := heap()
	for _, w := range ws {
		w.Stop()
	}
	wg.Wait()

	// Polled, as a transport without a goroutine per watch drives them:
	// each waits as an entry in the cache's list, with the timer of the
	// bookmark before its deadline. The heap alone: the stacks of the
	// goroutines above are still being given back.
	heapOnly := func() int64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc)
	}
	deadlineCtx, cancelDeadline := context.WithTimeout(ctx, time.Hour)
	defer cancelDeadline()
	clear(ws)
	idle := heapOnly()
	for i := range ws {
		w, err := c.Watch(deadlineCtx, opts)
		if err != nil {
			b.Fatal(err)
		}
		pw := w.(storage.Watcher[*widget])
		if evs, err := pw.Poll(deadlineCtx, nil); len(evs) != 0 || err != nil {
			b.Fatalf("Poll: %d events, %v", len(evs), err)
		}
		pw.NotifyOnce(func() {})
		ws[i] = w
	}
	polled := heapOnly()
	for _, w := range ws {
		w.Stop()
	}

	b.ReportAllocs()
	for b.Loop() {
		w, err := c.Watch(ctx, opts)
		if err != nil {
			b.Fatal(err)
		}
		w.Stop()
	}
	b.ReportMetric(float64(cursors-start)/n, "bytes/watcher")
	b.ReportMetric(float64(blocked-start)/n, "bytes/watcher+goroutine")
	b.ReportMetric(float64(polled-idle)/n, "bytes/watcher-polled")
}

// BenchmarkInitialEvents starts a watch at RV "0" on 10,000 objects of
// about 1 KiB and reads its initial events: what a client-go informer's
// watch-list costs the cache, per watch.
func BenchmarkInitialEvents(b *testing.B) {
	const objects = 10000
	client := etcdtest.Start(b)
	c, ctx := benchObjects(b, client, objects)
	b.ReportAllocs()
	var buf []storage.Event[*widget]
	for b.Loop() {
		w, err := c.Watch(ctx, storage.ListOptions{ResourceVersion: "0"})
		if err != nil {
			b.Fatal(err)
		}
		events := storage.NewBlocking(w)
		for got := 0; got < objects; {
			if buf, err = events.Next(ctx, buf[:0]); err != nil {
				b.Fatal(err)
			}
			got += len(buf)
		}
		w.Stop()
	}
}

// benchObjects stores n widgets of about 1 KiB in etcd, eight writers at
// a time, and returns a cache on them that has caught up.
func benchObjects(b *testing.B, client *clientv3.Client, n int) (*Cache[*widget], context.Context) {
	def := storagetest.Definition()
	store := storage.New(client, storagetest.Prefix, def)
	ctx := context.WithoutCancel(b.Context())
	var wg sync.WaitGroup
	var lastRev atomic.Int64
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += 8 {
				w := benchWidget(fmt.Sprintf("ns%d", i%10), fmt.Sprintf("w%05d", i), 0, "web")
				out, err := store.Create(ctx, storage.Key(w.Namespace, w.Name), w)
				if err != nil {
					b.Error(err)
					return
				}
				if rev := rvOf(out); rev > lastRev.Load() {
					lastRev.Store(rev)
				}
			}
		}()
	}
	wg.Wait()
	c := newWidgetCache(b, client)
	waitRevision(b, c, lastRev.Load())
	return c, ctx
}

// BenchmarkList lists 10,000 objects of about 1 KiB: from the store (the
// baseline: an etcd read and 10,000 decodes) and from the cache at RV "0",
// consistently (RV "": one quorum read of etcd's revision), and as
// kubectl pages it (limit 500, RV "").
func BenchmarkList(b *testing.B) {
	const objects = 10000
	client := etcdtest.Start(b)
	c, ctx := benchObjects(b, client, objects)
	store := storage.New(client, storagetest.Prefix, storagetest.Definition())

	check := func(l *storage.List[*widget], err error) {
		if err != nil {
			b.Fatal(err)
		}
		if len(l.Items) != objects {
			b.Fatalf("listed %d objects, want %d", len(l.Items), objects)
		}
	}
	b.Run("store", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			check(store.GetList(ctx, storage.ListOptions{}))
		}
	})
	b.Run("cache/rv=0", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			check(c.GetList(ctx, storage.ListOptions{ResourceVersion: "0"}))
		}
	})
	b.Run("cache/rv=0/encoded", func(b *testing.B) {
		// What a JSON list's handler asks for (storage.ListOptions.Encoded).
		b.ReportAllocs()
		for b.Loop() {
			l, err := c.GetList(ctx, storage.ListOptions{ResourceVersion: "0", Encoded: true})
			if err != nil || l.Len() != objects {
				b.Fatalf("listed %v: %v", l, err)
			}
		}
	})
	b.Run("cache/consistent", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			check(c.GetList(ctx, storage.ListOptions{}))
		}
	})
	b.Run("cache/consistent/limit=500", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var all []*widget
			opts := storage.ListOptions{Limit: 500}
			for {
				l, err := c.GetList(ctx, opts)
				if err != nil {
					b.Fatal(err)
				}
				all = append(all, l.Items...)
				if l.Continue == "" {
					break
				}
				opts = storage.ListOptions{Limit: 500, Continue: l.Continue}
			}
			check(&storage.List[*widget]{Items: all}, nil)
		}
	})
}

// BenchmarkGet reads one of 10,000 objects at RV "0" from the cache: as a
// JSON GET's handler asks for it (encoded: the JSON alone), and with the
// decoded object (object), which the cache now makes on demand.
func BenchmarkGet(b *testing.B) {
	const objects = 10000
	c, ctx := benchObjects(b, etcdtest.Start(b), objects)
	for _, encoded := range []bool{true, false} {
		name := "object"
		if encoded {
			name = "encoded"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				j := i % objects
				key := storage.Key(fmt.Sprintf("ns%d", j%10), fmt.Sprintf("w%05d", j))
				if _, raw, err := c.GetEncoded(ctx, key, storage.GetOptions{ResourceVersion: "0", Encoded: encoded}); err != nil || raw == nil {
					b.Fatalf("get %s: %v", key, err)
				}
				i += 7919 // a prime: keys all over the tree
			}
		})
	}
}
