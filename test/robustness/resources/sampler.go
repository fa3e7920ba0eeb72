package resources

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// ErrNotBack is returned by WaitBack when a figure stays above its
// baseline plus tolerance until the deadline.
var ErrNotBack = errors.New("resources: not back to baseline")

// Replica is how the sampler reads one apiloom replica.
type Replica struct {
	Name string
	// Pid is the live process's id, 0 when it is not running (killed, or
	// between incarnations).
	Pid func() int
	// Goroutines reads the replica's go_goroutines (its /metrics).
	Goroutines func(context.Context) (int, error)
}

// Probes are the sampler's sources: the replicas, and etcd's watcher count
// summed over the members that answer.
type Probes struct {
	Replicas     []Replica
	EtcdWatchers func(context.Context) (int, error)
	// Proc reads a process's RSS (bytes) and open fds; nil is /proc.
	Proc func(pid int) (rss int64, fds int, err error)
}

// Figures is one replica's reading. A figure that could not be read (a
// paused replica does not answer /metrics) is -1.
type Figures struct {
	RSS        int64
	FDs        int
	Goroutines int
}

// Reading is one sample of everything.
type Reading struct {
	At       time.Time
	Replicas []Figures
	// EtcdWatchers is etcd_debugging_mvcc_watcher_total summed over the
	// members; -1 when no member answered.
	EtcdWatchers int
}

func (r Reading) String() string {
	var b strings.Builder
	for i, f := range r.Replicas {
		fmt.Fprintf(&b, "replica %d: %d goroutines, %d fds, RSS %.1f MiB; ", i, f.Goroutines, f.FDs, float64(f.RSS)/(1<<20))
	}
	fmt.Fprintf(&b, "etcd watchers %d", r.EtcdWatchers)
	return b.String()
}

// Tolerance is how far above its baseline a figure may stay once traffic
// has stopped.
type Tolerance struct {
	Goroutines, FDs, EtcdWatchers int
}

// DefaultTolerance allows, per replica (goroutines: per replica, over their
// sum), for the connections the suite's
// own clients keep open after the traffic (each clientset keeps one
// HTTP/2 connection per replica, idle until the server's 90 s idle
// timeout: one fd and a handful of goroutines, counted here generously at
// two connections) and the requests in flight of anything else still
// running; etcd watchers must come back exactly but for two (the suite's
// own history watch is cancelled asynchronously).
var DefaultTolerance = Tolerance{Goroutines: 25, FDs: 6, EtcdWatchers: 2}

// Sampler samples Probes every interval in its own goroutine, from
// Start until Stop.
type Sampler struct {
	probes   Probes
	interval time.Duration
	now      func() time.Time

	// mu guards readings and peaks.
	mu       sync.Mutex
	readings []Reading
	peaks    []int64 // the RSS peak of each replica

	stop context.CancelFunc
	done chan struct{}
}

// New returns a sampler of p; Start starts it.
func New(p Probes, interval time.Duration) *Sampler {
	return newSampler(p, interval, time.Now)
}

func newSampler(p Probes, interval time.Duration, now func() time.Time) *Sampler {
	if p.Proc == nil {
		p.Proc = procFigures
	}
	return &Sampler{probes: p, interval: interval, now: now, peaks: make([]int64, len(p.Replicas))}
}

// Start takes a first sample and then one every interval until Stop or
// ctx's end.
func (s *Sampler) Start(ctx context.Context) {
	ctx, s.stop = context.WithCancel(ctx)
	s.done = make(chan struct{})
	s.Sample(ctx)
	go func() {
		defer close(s.done)
		t := time.NewTicker(s.interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				s.Sample(ctx)
			}
		}
	}()
}

// Stop stops the sampling goroutine and waits for it.
func (s *Sampler) Stop() {
	if s.stop != nil {
		s.stop()
		<-s.done
	}
}

// Sample reads every probe once (each bounded by a second), records the
// reading and returns it.
func (s *Sampler) Sample(ctx context.Context) Reading {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	r := Reading{At: s.now(), EtcdWatchers: -1}
	for _, rep := range s.probes.Replicas {
		f := Figures{RSS: -1, FDs: -1, Goroutines: -1}
		if pid := rep.Pid(); pid != 0 {
			if rss, fds, err := s.probes.Proc(pid); err == nil {
				f.RSS, f.FDs = rss, fds
			}
		}
		if n, err := rep.Goroutines(ctx); err == nil {
			f.Goroutines = n
		}
		r.Replicas = append(r.Replicas, f)
	}
	if n, err := s.probes.EtcdWatchers(ctx); err == nil {
		r.EtcdWatchers = n
	}
	s.mu.Lock()
	s.readings = append(s.readings, r)
	for i, f := range r.Replicas {
		s.peaks[i] = max(s.peaks[i], f.RSS)
	}
	s.mu.Unlock()
	return r
}

// Peaks returns each replica's RSS peak over every sample so far.
func (s *Sampler) Peaks() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int64(nil), s.peaks...)
}

// PeakSince returns each replica's RSS peak over the samples taken at or
// after since.
func (s *Sampler) PeakSince(since time.Time) []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]int64, len(s.peaks))
	for _, r := range s.readings {
		if r.At.Before(since) {
			continue
		}
		for i, f := range r.Replicas {
			out[i] = max(out[i], f.RSS)
		}
	}
	return out
}

// Baseline takes n samples (a fresh one each interval) and returns, for
// each figure, the lowest complete reading: a momentary request in flight
// does not raise the bar the scenario is held to.
func (s *Sampler) Baseline(ctx context.Context, n int) (Reading, error) {
	var base Reading
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for i := 0; i < n; i++ {
		if i > 0 {
			select {
			case <-ctx.Done():
				return base, ctx.Err()
			case <-t.C:
			}
		}
		r := s.Sample(ctx)
		if err := complete(r); err != nil {
			return base, fmt.Errorf("resources: baseline: %w", err)
		}
		if i == 0 {
			base = r
			continue
		}
		base.At = r.At
		for j, f := range r.Replicas {
			b := &base.Replicas[j]
			b.RSS, b.FDs, b.Goroutines = min(b.RSS, f.RSS), min(b.FDs, f.FDs), min(b.Goroutines, f.Goroutines)
		}
		base.EtcdWatchers = min(base.EtcdWatchers, r.EtcdWatchers)
	}
	return base, nil
}

// complete says what r lacks, if anything.
func complete(r Reading) error {
	for i, f := range r.Replicas {
		if f.FDs < 0 || f.Goroutines < 0 {
			return fmt.Errorf("replica %d unreadable (%d fds, %d goroutines)", i, f.FDs, f.Goroutines)
		}
	}
	if r.EtcdWatchers < 0 {
		return errors.New("no etcd member answered /metrics")
	}
	return nil
}

// Excess says which figures of r exceed base plus tol ("" when none).
// Unreadable figures count as exceeding: a check must not pass on a
// replica it could not see.
func Excess(r, base Reading, tol Tolerance) string {
	var out []string
	// Goroutines are compared over all replicas together: the replica
	// holding the controllers' lease runs ~190 more than the others, and
	// a scenario that kills the holder moves the lease, not a leak. A
	// leak in one replica still raises the sum.
	goroutines, baseGoroutines, unreadable := 0, 0, false
	for i, f := range r.Replicas {
		goroutines += f.Goroutines
		baseGoroutines += base.Replicas[i].Goroutines
		unreadable = unreadable || f.Goroutines < 0
	}
	if tolAll := tol.Goroutines * len(r.Replicas); unreadable || goroutines > baseGoroutines+tolAll {
		var each []string
		for i, f := range r.Replicas {
			each = append(each, fmt.Sprintf("replica %d: %d, baseline %d", i, f.Goroutines, base.Replicas[i].Goroutines))
		}
		out = append(out, fmt.Sprintf("goroutines %d over all replicas (baseline %d + %d; %s)", goroutines, baseGoroutines, tolAll, strings.Join(each, "; ")))
	}
	for i, f := range r.Replicas {
		b := base.Replicas[i]
		if f.FDs < 0 || f.FDs > b.FDs+tol.FDs {
			out = append(out, fmt.Sprintf("replica %d fds %d (baseline %d + %d)", i, f.FDs, b.FDs, tol.FDs))
		}
	}
	if r.EtcdWatchers < 0 || r.EtcdWatchers > base.EtcdWatchers+tol.EtcdWatchers {
		out = append(out, fmt.Sprintf("etcd watchers %d (baseline %d + %d)", r.EtcdWatchers, base.EtcdWatchers, tol.EtcdWatchers))
	}
	return strings.Join(out, ", ")
}

// WaitBack samples each interval until a reading is within base plus tol,
// and returns it; after within it returns the last reading and
// ErrNotBack naming the figures still above.
func (s *Sampler) WaitBack(ctx context.Context, base Reading, tol Tolerance, within time.Duration) (Reading, error) {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	t := time.NewTicker(s.interval)
	defer t.Stop()
	var last Reading
	var lastEx string
	for {
		r := s.Sample(ctx)
		if ctx.Err() != nil && lastEx != "" {
			// Probes cut short by the deadline read nothing: report
			// the last reading taken in time.
			return last, fmt.Errorf("%w after %v: %s", ErrNotBack, within, lastEx)
		}
		ex := Excess(r, base, tol)
		if ex == "" {
			return r, nil
		}
		last, lastEx = r, ex
		select {
		case <-ctx.Done():
			return r, fmt.Errorf("%w after %v: %s", ErrNotBack, within, ex)
		case <-t.C:
		}
	}
}
