package etcdclient

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// BenchmarkEmbeddedEtcdChurn measures the embedded etcd's file and the
// process's memory after churn: it creates objects of about 1.5 KiB, one
// request each as the server writes them, then updates each once and
// deletes half of them, compacting after each phase as the compactor does.
// It reports the database file size and bytes in use, per created object
// too, and the process's resident set size (one configuration per
// process, so run each alone):
//
//	go test -run XXX -bench 'EmbeddedEtcdChurn/defrag=false' -benchtime 1x ./server/etcdclient/
//	go test -run XXX -bench 'EmbeddedEtcdChurn/defrag=true' -benchtime 1x ./server/etcdclient/
//
// APILOOM_CHURN_OBJECTS sets the number of objects (default 100000);
// APILOOM_CHURN_CATCHUP sets etcd's SnapshotCatchUpEntries (0: etcd's).
func BenchmarkEmbeddedEtcdChurn(b *testing.B) {
	objects := envInt(b, "APILOOM_CHURN_OBJECTS", 100000)
	if n := envInt(b, "APILOOM_CHURN_CATCHUP", 0); n > 0 {
		embeddedSnapshotCatchUpEntries = uint64(n)
		b.Cleanup(func() { embeddedSnapshotCatchUpEntries = 0 })
	}
	for _, defrag := range []bool{false, true} {
		b.Run(fmt.Sprintf("defrag=%v", defrag), func(b *testing.B) {
			for range b.N {
				churn(b, objects, defrag)
			}
		})
	}
}

func churn(b *testing.B, objects int, defrag bool) {
	cfg := Config{Dir: b.TempDir()}
	if defrag {
		cfg.DefragReclaimableBytes, cfg.DefragReclaimablePercent = DefaultDefragReclaimableBytes, DefaultDefragReclaimablePercent
	}
	c, err := Connect(b.Context(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx, stop := context.WithCancel(b.Context())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); c.RunQuotaRecovery(ctx) }()
	defer wg.Wait()
	defer stop()

	value := strings.Repeat("x", 1500)
	key := func(i int) string { return fmt.Sprintf("/registry/example.com/widgets/ns-%02d/widget-%07d", i%50, i) }
	each := func(n int, op func(i int) error) {
		next := make(chan int)
		errs := make(chan error, 32)
		var wg sync.WaitGroup
		for range 32 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					if err := op(i); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
	feed:
		for i := range n {
			select {
			case next <- i:
			case err := <-errs:
				b.Error(err)
				break feed
			}
		}
		close(next)
		wg.Wait()
		if b.Failed() {
			b.FailNow()
		}
	}
	compact := func() {
		head, err := c.Client.Get(ctx, "/", clientv3.WithCountOnly())
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.Client.Compact(ctx, head.Header.Revision); err != nil {
			b.Fatal(err)
		}
	}
	status := func(phase string) {
		st, err := c.Client.Status(ctx, c.Endpoint())
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("%s: file %d MiB, in use %d MiB, rss %d MiB", phase, st.DbSize>>20, st.DbSizeInUse>>20, rssBytes(b)>>20)
	}

	each(objects, func(i int) error { _, err := c.Client.Put(ctx, key(i), value); return err })
	status("created")
	created, err := c.Client.Status(ctx, c.Endpoint())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(created.DbSizeInUse)/float64(objects), "inuse-B/object")
	each(objects, func(i int) error { _, err := c.Client.Put(ctx, key(i), value+"y"); return err })
	compact()
	status("updated, compacted")
	each(objects/2, func(i int) error { _, err := c.Client.Delete(ctx, key(2*i)); return err })
	compact()
	status("half deleted, compacted")
	if defrag {
		// The defragmentation follows the compaction in Run's goroutine.
		checks := c.recovery.defrag.checks
		deadline := time.Now().Add(10 * time.Minute)
		for testutil.ToFloat64(checks.WithLabelValues(defragDone))+testutil.ToFloat64(checks.WithLabelValues(defragNotNeeded)) < 2 {
			if time.Now().After(deadline) {
				b.Fatal("no look after both compactions within 10 minutes")
			}
			time.Sleep(10 * time.Millisecond)
		}
		b.ReportMetric(testutil.ToFloat64(checks.WithLabelValues(defragDone)), "defrags")
	}
	st, err := c.Client.Status(ctx, c.Endpoint())
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(st.DbSize)/(1<<20), "file-MiB")
	b.ReportMetric(float64(st.DbSizeInUse)/(1<<20), "inuse-MiB")
	b.ReportMetric(float64(rssBytes(b))/(1<<20), "rss-MiB")
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heapinuse-MiB")
	if !defrag {
		// What one defragmentation of this database costs.
		start := time.Now()
		if _, err := c.Client.Defragment(ctx, c.Endpoint()); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(time.Since(start).Milliseconds()), "defrag-ms")
		status("defragmented by hand")
	}
}

func envInt(b *testing.B, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	return n
}

// rssBytes is the process's resident set size (Linux), or 0.
func rssBytes(b *testing.B) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if kb, ok := strings.CutPrefix(s.Text(), "VmRSS:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(kb), "kB")), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return n << 10
		}
	}
	return 0
}
