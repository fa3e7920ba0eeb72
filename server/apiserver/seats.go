package apiserver

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// seatPool is one kind's share of the server's concurrency: limit seats,
// of which each request takes one or more while it is served. A request
// that finds too few free waits for them in a FIFO queue, for a while;
// beyond that wait, or when the queue is full, it is turned away. A pool
// with limit 0 counts requests and holds none back.
type seatPool struct {
	// Immutable.
	limit      int // seats; 0: no limit
	maxWaiting int // requests the queue holds
	executing  prometheus.Gauge
	waiting    prometheus.Gauge
	dropped    prometheus.Counter

	mu    sync.Mutex
	used  int           // guarded by mu: seats taken
	queue []*seatWaiter // guarded by mu: oldest first
}

// seatWaiter is a request in the queue; granted is closed once its seats
// are taken for it.
type seatWaiter struct {
	seats   int
	granted chan struct{}
}

// acquire takes seats for a request, waiting at most maxWait, and no
// longer than ctx, behind the requests queued before it. It reports false
// when the request is turned away. A request never needs more seats than
// the pool has.
func (p *seatPool) acquire(ctx context.Context, seats int, maxWait time.Duration) bool {
	if p.limit == 0 {
		p.executing.Inc()
		return true
	}
	seats = min(seats, p.limit)
	p.mu.Lock()
	if len(p.queue) == 0 && p.used+seats <= p.limit {
		p.used += seats
		p.mu.Unlock()
		p.executing.Inc()
		return true
	}
	if len(p.queue) >= p.maxWaiting {
		p.mu.Unlock()
		p.dropped.Inc()
		return false
	}
	w := &seatWaiter{seats: seats, granted: make(chan struct{})}
	p.queue = append(p.queue, w)
	p.mu.Unlock()

	p.waiting.Inc()
	defer p.waiting.Dec()
	timer := time.NewTimer(maxWait)
	defer timer.Stop()
	select {
	case <-w.granted:
		p.executing.Inc()
		return true
	case <-timer.C:
	case <-ctx.Done():
	}
	p.mu.Lock()
	i := slices.Index(p.queue, w)
	if i < 0 { // granted as the wait ended
		p.mu.Unlock()
		p.executing.Inc()
		return true
	}
	p.queue = slices.Delete(p.queue, i, i+1)
	p.grantLocked() // it may have held back smaller requests behind it
	p.mu.Unlock()
	p.dropped.Inc()
	return false
}

// release returns the seats a request took.
func (p *seatPool) release(seats int) {
	p.executing.Dec()
	if p.limit == 0 {
		return
	}
	p.mu.Lock()
	p.used -= min(seats, p.limit)
	p.grantLocked()
	p.mu.Unlock()
}

// grantLocked gives free seats to the queue's requests in order, as long
// as the oldest fits: a large request is not passed over by smaller ones.
// p.mu must be held.
func (p *seatPool) grantLocked() {
	for len(p.queue) > 0 && p.used+p.queue[0].seats <= p.limit {
		w := p.queue[0]
		p.used += w.seats
		close(w.granted)
		p.queue[0] = nil
		p.queue = p.queue[1:]
	}
}
