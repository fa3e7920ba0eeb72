package snapshot

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestScheduleTakesAndPrunes runs the default schedule for three days of
// fake time: a snapshot every 12 hours, the newest Retention of its own
// kept, and nobody else's file touched.
func TestScheduleTakesAndPrunes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		foreign := []string{
			"manual.db", // the operator's
			"apiloom-etcd-snapshot-other-19991231T000000Z.db",   // another node's
			"apiloom-etcd-snapshot-n1-notatime.db",              // not a name it makes
			"apiloom-etcd-snapshot-n1-19991231T000000Z.db.part", // not a snapshot
		}
		for _, name := range append(slices.Clone(foreign), "apiloom-etcd-snapshot-n1-19991230T000000Z.db") {
			if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		// Written by the test, read by the schedule's goroutine: the race
		// detector does not count a fake timer's firing as a handover.
		var mu sync.Mutex
		var saves []time.Time
		var fail atomic.Bool
		s := &Schedule{
			Spec: "CRON_TZ=UTC " + DefaultSchedule, Retention: 3, Dir: dir, Node: "n1",
			Log: slog.New(slog.DiscardHandler),
			Save: func(ctx context.Context, path string) (Info, error) {
				mu.Lock()
				saves = append(saves, time.Now())
				mu.Unlock()
				if fail.Load() {
					return Info{}, errors.New("etcd unreachable")
				}
				return Info{Path: path}, os.WriteFile(path, nil, 0o600)
			},
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- s.Run(ctx) }()

		start := time.Now().UTC() // synctest's midnight, 2000-01-01
		own := func() []string {
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range entries {
				if !slices.Contains(foreign, e.Name()) {
					names = append(names, e.Name())
				}
			}
			return names
		}
		name := func(h int) string {
			return "apiloom-etcd-snapshot-n1-" + start.Add(time.Duration(h)*time.Hour).Format(fileTime) + ".db"
		}

		time.Sleep(11 * time.Hour)
		synctest.Wait()
		taken := func() []time.Time { mu.Lock(); defer mu.Unlock(); return slices.Clone(saves) }
		if saves := taken(); len(saves) != 0 {
			t.Fatalf("saved before the first 12-hour mark: %v", saves)
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		if want := []string{"apiloom-etcd-snapshot-n1-19991230T000000Z.db", name(12)}; !slices.Equal(own(), want) {
			t.Fatalf("after the first: %v; want %v", own(), want)
		}
		time.Sleep(24 * time.Hour) // 24:00 and 36:00
		synctest.Wait()
		if want := []string{name(12), name(24), name(36)}; !slices.Equal(own(), want) {
			t.Fatalf("after the third: %v; want %v (the oldest of its own pruned)", own(), want)
		}
		fail.Store(true)
		time.Sleep(12 * time.Hour)
		synctest.Wait()
		if want := []string{name(12), name(24), name(36)}; !slices.Equal(own(), want) {
			t.Fatalf("after a failed one: %v; want %v kept", own(), want)
		}
		fail.Store(false)
		time.Sleep(12 * time.Hour)
		synctest.Wait()
		if want := []string{name(24), name(36), name(60)}; !slices.Equal(own(), want) {
			t.Fatalf("after the fifth: %v; want %v", own(), want)
		}
		if saves := taken(); len(saves) != 5 || !saves[4].Equal(start.Add(60*time.Hour)) {
			t.Fatalf("saves at %v; want 5, the last at 60h", saves)
		}
		for _, f := range foreign {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("run: %v", err)
		}
	})
}

func TestScheduleRefusesBadSettings(t *testing.T) {
	for _, s := range []Schedule{
		{Spec: "0 */12 * *", Retention: 5},    // four fields
		{Spec: "61 * * * *", Retention: 5},    // no minute 61
		{Spec: DefaultSchedule, Retention: 0}, // keeps nothing
		{Spec: "0 0 30 2 *", Retention: 5},    // February 30th: never
	} {
		s.Dir, s.Node, s.Log = t.TempDir(), "n", slog.New(slog.DiscardHandler)
		s.Save = func(context.Context, string) (Info, error) { t.Fatal("saved"); return Info{}, nil }
		ctx, cancel := context.WithCancel(t.Context())
		cancel() // a valid schedule would return nil at once
		if err := s.Run(ctx); err == nil {
			t.Errorf("%q retention %d: no error", s.Spec, s.Retention)
		}
	}
}
