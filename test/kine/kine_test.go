// Package kine runs apiloom's storage conformance suite on kine over
// SQLite, started in-process from kine's Go module: kine serves etcd's
// API over SQL databases. It is a module of its own so that kine's
// dependencies stay out of apiloom's.
package kine

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/k3s-io/kine/pkg/endpoint"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/apiloom/apiloom/server/cache"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// startKine serves etcd's API from a SQLite database in t's directory,
// or from the database APILOOM_KINE_ENDPOINT names (make test-postgres),
// until t ends, and returns a client of it.
func startKine(t *testing.T) *clientv3.Client {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	dir := t.TempDir()
	db := os.Getenv("APILOOM_KINE_ENDPOINT")
	if db == "" {
		db = "sqlite://" + filepath.Join(dir, "state.db") + "?_journal=WAL&cache=shared&_busy_timeout=30000"
	}
	cfg, err := endpoint.Listen(ctx, endpoint.Config{
		Listener: "unix://" + filepath.Join(dir, "kine.sock"),
		Endpoint: db,
		// kine's own command-line defaults, but for CompactMinRetain: 0
		// makes a compaction do what it does on etcd (docs/backends.md).
		NotifyInterval: 5 * time.Second, EmulatedETCDVersion: "3.6.11", CompactTimeout: 5 * time.Second,
		CompactMinRetain: 0, CompactBatchSize: 1000, PollBatchSize: 500, PollInterval: time.Second,
	})
	if err != nil {
		cancel()
		t.Fatalf("kine: %v", err)
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: cfg.Endpoints, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(); cancel() })
	return c
}

// TestConformance runs the storage suite on kine, creates read back as
// the server does on a backend that is not etcd (--etcd-verify-creates).
func TestConformance(t *testing.T) {
	storagetest.Run(t, storagetest.Config{
		Etcd: startKine,
		NewStore: func(t *testing.T, c *clientv3.Client) storage.Interface[*storagetest.Widget] {
			return storage.New(c, storagetest.Prefix, storagetest.Definition(), storage.WithVerifiedCreates(true))
		},
	})
}

// TestCacheConformance runs the suite against the watch cache fed by a
// store on kine: the cache's list and watch from kine's watch, which kine
// serves by polling its table.
func TestCacheConformance(t *testing.T) {
	storagetest.Run(t, storagetest.Config{
		Etcd: startKine,
		NewStore: func(t *testing.T, c *clientv3.Client) storage.Interface[*storagetest.Widget] {
			def := storagetest.Definition()
			wc, err := cache.New(def, storage.New(c, storagetest.Prefix, def, storage.WithVerifiedCreates(true)), cache.WithWaitTimeout(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(wc.Close)
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			if err := wc.WaitReady(ctx); err != nil {
				t.Fatalf("cache not ready: %v", err)
			}
			return wc
		},
		Skip: map[string]string{
			"ListCompacted":       "the cache's own history outlives a compaction of the backend; server/cache tests it on etcd",
			"ListContinueExpired": "the cache's own history outlives a compaction of the backend; server/cache tests it on etcd",
			"WatchExpired":        "the cache's own history outlives a compaction of the backend; server/cache tests it on etcd",
		},
	})
}

// keyspace is the key prefix of t's objects: tests share one database
// under make test-postgres, so each keeps to its own keys, as the suite's
// tests do, and to its own run's, so that a database kept from an earlier
// run (PG_KEEP) does not fail it.
func keyspace(t *testing.T) string { return "/" + t.Name() + "-" + runID + storagetest.Prefix }

var runID = strconv.FormatInt(time.Now().UnixNano(), 36)
