package h2

import (
	"sync"
	"sync/atomic"
	"time"
)

// workerIdle is how long a handler goroutine waits for its next request
// before it exits.
const workerIdle = 5 * time.Second

// workers runs handlers on goroutines that serve one request after
// another, as gRPC's stream workers do. A request's goroutine grows its
// stack to what the handler chain needs (filters, admission, the field
// manager's reflection: tens of KiB); a new goroutine for every request
// grew its stack and copied it each time, about 6% of the server's CPU
// on creates by profile. A worker keeps its grown stack for the next
// request (the runtime halves an idle stack at most once a GC).
//
// No request waits for a worker: one that finds none idle gets a new
// goroutine, which becomes a worker when its request is done. Workers
// exit after workerIdle without a request, or when stopped: each
// connection has its own, and stops them once its last handler returned.
type workers struct {
	tasks chan func() // unbuffered: a send succeeds only into an idle worker
	idle  time.Duration

	stopOnce sync.Once
	stopped  chan struct{}

	running sync.WaitGroup
	live    atomic.Int64 // goroutines started and not yet exited, for tests
}

func newWorkers(idle time.Duration) *workers {
	return &workers{tasks: make(chan func()), idle: idle, stopped: make(chan struct{})}
}

// run runs f on an idle worker or on a new goroutine; it never blocks.
func (w *workers) run(f func()) {
	select {
	case w.tasks <- f:
		return
	default:
	}
	w.live.Add(1)
	w.running.Add(1)
	go w.work(f)
}

func (w *workers) work(f func()) {
	defer w.running.Done()
	defer w.live.Add(-1)
	timer := time.NewTimer(w.idle)
	defer timer.Stop()
	for {
		f()
		f = nil // let the request's memory go while idle
		select {
		case <-w.stopped:
			return
		default:
		}
		timer.Reset(w.idle)
		select {
		case f = <-w.tasks:
		case <-timer.C:
			return
		case <-w.stopped:
			return
		}
	}
}

// stop makes idle workers exit and running ones exit when their request
// is done. Later requests still run, each on a goroutine of its own.
func (w *workers) stop() {
	w.stopOnce.Do(func() { close(w.stopped) })
}

// wait returns once every goroutine started has exited.
func (w *workers) wait() { w.running.Wait() }
