package apiserver

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/apiloom/apiloom/server/endpoints"
)

// tooManyRequests is the answer of kube-apiserver's max-in-flight filter
// when every seat is taken: 429 with its message and Retry-After: 1.
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

// withMaxInFlight serves at most readOnly read-only and mutating mutating
// requests at once, as kube-apiserver's --max-requests-inflight and
// --max-mutating-requests-inflight do without API Priority and Fairness:
// a request beyond the limit is answered 429 at once, not queued.
// Long-running requests (watches) and health checks hold no seat. A limit
// of 0 means none.
//
// kube-apiserver lets members of system:masters through when the seats
// are taken. apiloom has one admin token, which every client uses, so
// exempting it would disable the limit; when users and groups come (the
// RBAC issue), a privileged group should be exempted here.
func withMaxInFlight(readOnly, mutating int, reg prometheus.Registerer, next http.Handler) http.Handler {
	current := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "apiloom_current_inflight_requests",
		Help: "Requests being served that hold a seat of --max-requests-inflight (readOnly) or --max-mutating-requests-inflight (mutating).",
	}, []string{"request_kind"})
	dropped := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiloom_dropped_requests_total",
		Help: "Requests answered 429 because every seat of --max-requests-inflight (readOnly) or --max-mutating-requests-inflight (mutating) was taken.",
	}, []string{"request_kind"})
	reg.MustRegister(current, dropped)
	kinds := [2]seats{newSeats(readOnly, current, dropped, readOnlyKind), newSeats(mutating, current, dropped, mutatingKind)}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if longRunning(r) || isHealthCheck(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		k := &kinds[0]
		if isMutating(r) {
			k = &kinds[1]
		}
		if !k.take() {
			endpoints.WriteError(w, tooManyRequests())
			return
		}
		defer k.release()
		next.ServeHTTP(w, r)
	})
}

// seats is one kind's limit and figures. Immutable; its channel is the
// semaphore.
type seats struct {
	taken   chan struct{} // nil: no limit
	current prometheus.Gauge
	dropped prometheus.Counter
}

func newSeats(limit int, current *prometheus.GaugeVec, dropped *prometheus.CounterVec, kind string) seats {
	s := seats{current: current.WithLabelValues(kind), dropped: dropped.WithLabelValues(kind)}
	if limit > 0 {
		s.taken = make(chan struct{}, limit)
	}
	return s
}

// take takes a seat if one is free, or counts the request as dropped.
func (s *seats) take() bool {
	if s.taken != nil {
		select {
		case s.taken <- struct{}{}:
		default:
			s.dropped.Inc()
			return false
		}
	}
	s.current.Inc()
	return true
}

func (s *seats) release() {
	s.current.Dec()
	if s.taken != nil {
		<-s.taken
	}
}
