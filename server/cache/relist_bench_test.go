package cache

import (
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// BenchmarkFill measures a cache's start: from New to ready over 50,000
// objects of about 1 KiB in etcd (the first list, paged). "default" runs
// with the default relist workers; "workers=N" sets them.
func BenchmarkFill(b *testing.B) {
	const objects = 50000
	client := etcdtest.Start(b)
	benchObjects(b, client, objects)
	def := storagetest.Definition()
	store := storage.New(client, storagetest.Prefix, def)
	fill := func(b *testing.B, opts ...Option) {
		b.ReportAllocs()
		for b.Loop() {
			c, err := New(def, store, opts...)
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(b.Context(), 5*time.Minute)
			err = c.WaitReady(ctx)
			cancel()
			if err != nil {
				b.Fatal(err)
			}
			if n := c.tree.Len(); n != objects {
				b.Fatalf("filled %d objects, want %d", n, objects)
			}
			c.Close()
		}
	}
	b.Run("default", func(b *testing.B) { fill(b) })
	for _, w := range []int{1, runtime.GOMAXPROCS(0)} {
		b.Run("workers="+strconv.Itoa(w), func(b *testing.B) { fill(b, withRelistWorkers(w)) })
	}
}
