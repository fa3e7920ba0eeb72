package apiserver

import (
	"net/http"
	"time"

	"github.com/apiloom/apiloom/server/endpoints/responsewriters"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// tooManyRequests is the answer of kube-apiserver's max-in-flight filter
// when no seat is free: 429 with its message and Retry-After: 1.
// kube-apiserver writes it as plain text, which client-go turns into a
// Status of the same code, reason and retryAfterSeconds; apiloom writes
// that Status itself (the Retry-After header follows from
// details.retryAfterSeconds), which client-go decodes as it is. Either
// way client-go waits the second and retries, up to 10 times.
func tooManyRequests() error {
	return apierrors.NewTooManyRequests("Too many requests, please try again later.", 1)
}

// Request kinds, kube-apiserver's label values.
const (
	readOnlyKind = "readOnly"
	mutatingKind = "mutating"
)

// The weight of a read, as kube-apiserver's API Priority and Fairness
// estimates a LIST's work: a seat per objectsPerSeat objects it reads,
// at least one and at most maxReadSeats.
const (
	objectsPerSeat = 100
	maxReadSeats   = 10
)

// readSizer is the resources' handler as withMaxInFlight weighs reads
// (endpoints.NewHandler's ReadSize).
type readSizer interface {
	ReadSize(r *http.Request) (objects int, known bool)
}

// maxQueueWait is how long a request may wait for seats: a quarter of the
// request timeout, API Priority and Fairness's wait limit, or as much as
// with the default timeout when there is none.
func maxQueueWait(requestTimeout time.Duration) time.Duration {
	if requestTimeout <= 0 {
		requestTimeout = DefaultOptions().RequestTimeout
	}
	return requestTimeout / 4
}

// inFlight configures withMaxInFlight.
type inFlight struct {
	readOnly, mutating int // seats; 0: no limit
	// maxWait bounds a request's wait for seats.
	maxWait time.Duration
	// readSize says how many objects a read-only request reads; known is
	// false when it cannot tell. Nil counts every read as one object.
	readSize func(*http.Request) (objects int, known bool)
}

// readSeats is what a read-only request costs: one seat per 100 objects
// it reads, between 1 and 10, and 10 when its size is unknown.
func (f *inFlight) readSeats(r *http.Request) int {
	if f.readSize == nil {
		return 1
	}
	n, known := f.readSize(r)
	if !known {
		return maxReadSeats
	}
	return min(max((n+objectsPerSeat-1)/objectsPerSeat, 1), maxReadSeats)
}

// withMaxInFlight bounds the work served at once, as kube-apiserver's
// --max-requests-inflight and --max-mutating-requests-inflight do, with
// two things taken from its API Priority and Fairness, which
// kube-apiserver runs by default: a read takes a seat per 100 objects it
// reads (up to 10), so that a burst of large LISTs holds a bounded amount
// of memory and CPU and leaves room for health checks; and a request that
// finds too few seats free waits for them in a queue, up to maxWait (a
// quarter of the request timeout, as APF waits), before it is answered
// 429 with Retry-After: 1, which client-go retries. As many requests may
// wait as the pool has seats; more are answered 429 at once. Watches and
// health checks take no seat.
//
// kube-apiserver lets members of system:masters through when the seats
// are taken. apiloom has one admin token, which every client uses, so
// exempting it would disable the limit; when users and groups come (the
// RBAC issue), a privileged group should be exempted here.
func withMaxInFlight(cfg inFlight, reg prometheus.Registerer, next http.Handler) http.Handler {
	executing := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "apiloom_current_inflight_requests",
		Help: "Requests being served that hold seats of --max-requests-inflight (readOnly) or --max-mutating-requests-inflight (mutating).",
	}, []string{"request_kind"})
	waiting := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "apiloom_current_inqueue_requests",
		Help: "Requests waiting for seats of --max-requests-inflight (readOnly) or --max-mutating-requests-inflight (mutating).",
	}, []string{"request_kind"})
	dropped := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiloom_dropped_requests_total",
		Help: "Requests answered 429 because no seats of --max-requests-inflight (readOnly) or --max-mutating-requests-inflight (mutating) came free in time.",
	}, []string{"request_kind"})
	reg.MustRegister(executing, waiting, dropped)
	pool := func(limit int, kind string) *seatPool {
		return &seatPool{
			limit: limit, maxWaiting: limit,
			executing: executing.WithLabelValues(kind), waiting: waiting.WithLabelValues(kind), dropped: dropped.WithLabelValues(kind),
		}
	}
	readOnly, mutating := pool(cfg.readOnly, readOnlyKind), pool(cfg.mutating, mutatingKind)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if longRunning(r) || isHealthCheck(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		p, seats := mutating, 1
		if !isMutating(r) {
			p, seats = readOnly, cfg.readSeats(r)
		}
		if !p.acquire(r.Context(), seats, cfg.maxWait) {
			responsewriters.WriteError(w, r, tooManyRequests())
			return
		}
		defer p.release(seats)
		next.ServeHTTP(w, r)
	})
}
