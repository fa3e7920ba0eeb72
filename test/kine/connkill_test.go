package kine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx", as kine's own
	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/types"

	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// TestCreatesWhileConnectionsDie creates objects through kine on
// PostgreSQL while another session terminates kine's connections every
// few milliseconds: inserts fail mid-flight while the next query, on a
// fresh pooled connection, succeeds. That is where kine (v0.17.5)
// acknowledges a create it did not store, or reports its own committed
// create as existing (server/storage createcheck.go); with creates read
// back (--etcd-verify-creates=auto on kine) every acknowledged create must
// be stored, and no create may be refused as existing.
func TestCreatesWhileConnectionsDie(t *testing.T) {
	endpoint := os.Getenv("APILOOM_KINE_ENDPOINT")
	if !strings.HasPrefix(endpoint, "postgres://") {
		t.Skip("make test-postgres runs this: it terminates PostgreSQL connections under kine")
	}
	level := logrus.GetLevel()
	logrus.SetLevel(logrus.FatalLevel) // kine logs every failed query
	t.Cleanup(func() { logrus.SetLevel(level) })
	c := startKine(t)
	s := storage.New(c, keyspace(t), storagetest.Definition(), storage.WithVerifiedCreates(true))
	db, err := sql.Open("pgx", endpoint)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })

	ctx, stop := context.WithCancel(t.Context())
	var bg sync.WaitGroup
	kills := 0
	bg.Go(func() {
		for ctx.Err() == nil {
			var n int
			err := db.QueryRowContext(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
				WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&n)
			if err == nil {
				kills += n
			}
			time.Sleep(20 * time.Millisecond) // the fault's rhythm, not a wait for a condition
		}
	})

	var (
		mu       sync.Mutex
		acked    []string
		failures = map[string]int{}
	)
	deadline := time.Now().Add(8 * time.Second)
	var writers sync.WaitGroup
	for w := range 4 {
		writers.Go(func() {
			for n := 0; time.Now().Before(deadline); n++ {
				key := storage.Key("ns", fmt.Sprintf("w%d-%d", w, n))
				widget := storagetest.NewWidget("ns", fmt.Sprintf("w%d-%d", w, n), "red")
				widget.UID = types.UID("uid-" + key) // as the handlers give every new object
				_, err := s.Create(ctx, key, widget)
				mu.Lock()
				switch {
				case err == nil:
					acked = append(acked, key)
				case errors.Is(err, storage.ErrExists):
					t.Errorf("create of new key %s refused as existing: %v", key, err)
				case errors.Is(err, storage.ErrBadResponse):
					failures["acknowledged by kine, not stored: caught"]++
				default:
					failures["failed"]++
				}
				mu.Unlock()
			}
		})
	}
	writers.Wait()
	stop()
	bg.Wait()

	lost := 0
	for _, key := range acked {
		var err error
		for range 50 { // kine's pool reconnects on the next query
			if _, err = s.Get(t.Context(), key, storage.GetOptions{}); err == nil || errors.Is(err, storage.ErrNotFound) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			lost++
			t.Errorf("acknowledged create %s: %v", key, err)
		}
	}
	t.Logf("%d connections terminated; creates: %d acknowledged, %d lost, %v", kills, len(acked), lost, failures)
	if len(acked) == 0 {
		t.Error("no create was acknowledged: the test did not exercise anything")
	}
}
