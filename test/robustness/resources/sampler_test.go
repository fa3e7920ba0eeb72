package resources

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// fake is a set of probes whose figures the test sets.
type fake struct {
	mu         sync.Mutex // guards everything below
	pid        int
	rss        int64
	fds, gor   int
	watchers   int
	etcdAnswer bool
	// calls counts Proc calls; on call thenAt the figures become then.
	calls, thenAt int
	then          func(f *fake)
}

func (f *fake) set(rss int64, fds, gor, watchers int) {
	f.mu.Lock()
	f.rss, f.fds, f.gor, f.watchers = rss, fds, gor, watchers
	f.mu.Unlock()
}

func (f *fake) probes() Probes {
	return Probes{
		Replicas: []Replica{{
			Name: "r0",
			Pid:  func() int { f.mu.Lock(); defer f.mu.Unlock(); return f.pid },
			Goroutines: func(context.Context) (int, error) {
				f.mu.Lock()
				defer f.mu.Unlock()
				return f.gor, nil
			},
		}},
		EtcdWatchers: func(context.Context) (int, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			if !f.etcdAnswer {
				return 0, errors.New("down")
			}
			return f.watchers, nil
		},
		Proc: func(int) (int64, int, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.calls++
			if f.then != nil && f.calls == f.thenAt {
				f.then(f)
			}
			return f.rss, f.fds, nil
		},
	}
}

func TestBaselineTakesTheLowest(t *testing.T) {
	f := &fake{pid: 1, etcdAnswer: true}
	f.set(100, 10, 50, 3)
	// Raise the figures from the second sample on.
	f.thenAt, f.then = 2, func(f *fake) { f.rss, f.fds, f.gor, f.watchers = 300, 30, 90, 9 }
	s := newSampler(f.probes(), time.Millisecond, time.Now)
	base, err := s.Baseline(t.Context(), 3)
	if err != nil {
		t.Fatal(err)
	}
	if b := base.Replicas[0]; b.RSS != 100 || b.FDs != 10 || b.Goroutines != 50 || base.EtcdWatchers != 3 {
		t.Errorf("baseline %v, want the first, lowest reading", base)
	}
}

func TestBaselineNeedsEveryProbe(t *testing.T) {
	f := &fake{pid: 1}
	if _, err := newSampler(f.probes(), time.Millisecond, time.Now).Baseline(t.Context(), 1); err == nil {
		t.Error("baseline without etcd's figures: no error")
	}
}

func TestPeaks(t *testing.T) {
	f := &fake{pid: 1, etcdAnswer: true}
	s := newSampler(f.probes(), time.Millisecond, time.Now)
	ctx := t.Context()
	f.set(100, 1, 1, 1)
	s.Sample(ctx)
	mid := time.Now()
	f.set(500, 1, 1, 1)
	s.Sample(ctx)
	f.set(200, 1, 1, 1)
	s.Sample(ctx)
	if p := s.Peaks(); p[0] != 500 {
		t.Errorf("peak %d, want 500", p[0])
	}
	f.set(50, 1, 1, 1)
	if p := s.PeakSince(time.Now()); p[0] != 0 {
		t.Errorf("peak since now %d, want 0 (no sample)", p[0])
	}
	if p := s.PeakSince(mid); p[0] != 500 {
		t.Errorf("peak since mid %d, want 500", p[0])
	}
}

func TestExcess(t *testing.T) {
	base := Reading{Replicas: []Figures{{RSS: 1, FDs: 10, Goroutines: 100}}, EtcdWatchers: 5}
	tol := Tolerance{Goroutines: 5, FDs: 2, EtcdWatchers: 1}
	check := excessChecker(t, tol)
	for _, c := range []struct {
		r    Reading
		want []string
	}{
		{Reading{Replicas: []Figures{{FDs: 12, Goroutines: 105}}, EtcdWatchers: 6}, nil},
		{Reading{Replicas: []Figures{{FDs: 13, Goroutines: 105}}, EtcdWatchers: 6}, []string{"fds 13"}},
		{Reading{Replicas: []Figures{{FDs: 12, Goroutines: 106}}, EtcdWatchers: 6}, []string{"goroutines 106"}},
		{Reading{Replicas: []Figures{{FDs: 12, Goroutines: 105}}, EtcdWatchers: 7}, []string{"etcd watchers 7"}},
		{Reading{Replicas: []Figures{{FDs: -1, Goroutines: -1}}, EtcdWatchers: -1}, []string{"fds -1", "goroutines -1", "etcd watchers -1"}},
	} {
		check(c.r, base, c.want)
	}

	// Two replicas; the controllers' lease moves from the first to the
	// second: the sum is unchanged, no excess. A leak in either raises it.
	base2 := Reading{Replicas: []Figures{{FDs: 10, Goroutines: 280}, {FDs: 10, Goroutines: 90}}, EtcdWatchers: 5}
	for _, c := range []struct {
		r    Reading
		want []string
	}{
		{Reading{Replicas: []Figures{{FDs: 10, Goroutines: 92}, {FDs: 10, Goroutines: 283}}, EtcdWatchers: 5}, nil},
		{Reading{Replicas: []Figures{{FDs: 10, Goroutines: 92}, {FDs: 10, Goroutines: 300}}, EtcdWatchers: 5}, []string{"goroutines 392 over all replicas (baseline 370 + 10"}},
		{Reading{Replicas: []Figures{{FDs: 10, Goroutines: 92}, {FDs: 10, Goroutines: -1}}, EtcdWatchers: 5}, []string{"replica 1: -1"}},
	} {
		check(c.r, base2, c.want)
	}
}

func excessChecker(t *testing.T, tol Tolerance) func(r, base Reading, want []string) {
	return func(r, base Reading, want []string) {
		t.Helper()
		got := Excess(r, base, tol)
		if (got == "") != (len(want) == 0) {
			t.Errorf("Excess(%v) = %q, want %q", r, got, want)
		}
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("Excess(%v) = %q, lacks %q", r, got, w)
			}
		}
	}
}

func TestWaitBack(t *testing.T) {
	f := &fake{pid: 1, etcdAnswer: true}
	f.set(1, 10, 100, 5)
	s := newSampler(f.probes(), time.Millisecond, time.Now)
	base := s.Sample(t.Context())
	f.set(1, 10, 200, 5) // a leak of 100 goroutines
	if _, err := s.WaitBack(t.Context(), base, DefaultTolerance, 20*time.Millisecond); !errors.Is(err, ErrNotBack) {
		t.Fatalf("WaitBack with a leak: %v, want ErrNotBack", err)
	}
	f.mu.Lock()
	f.thenAt, f.then = f.calls+3, func(f *fake) { f.gor = 101 } // the leak ends at the third sample
	f.mu.Unlock()
	if _, err := s.WaitBack(t.Context(), base, DefaultTolerance, time.Minute); err != nil {
		t.Fatalf("WaitBack after the leak ended: %v", err)
	}
}

// TestProcFigures reads the test process itself.
func TestProcFigures(t *testing.T) {
	rss, fds, err := procFigures(os.Getpid())
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	if rss <= 0 || fds < 3 {
		t.Errorf("RSS %d, fds %d: want > 0 and >= 3", rss, fds)
	}
}

func TestStartStop(t *testing.T) {
	f := &fake{pid: 1, etcdAnswer: true}
	s := newSampler(f.probes(), time.Millisecond, time.Now)
	s.Start(t.Context())
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.mu.Lock()
		n := len(s.readings)
		s.mu.Unlock()
		if n >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("sampler took no samples")
		}
		time.Sleep(time.Millisecond)
	}
	s.Stop()
}
