package apiserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// holder serves requests through a handler that holds each until it is
// released.
type holder struct {
	t       *testing.T
	h       http.Handler
	serving chan struct{}
	wg      sync.WaitGroup
}

type releaseKey struct{}

func newHolder(t *testing.T, wrap func(http.Handler) http.Handler) *holder {
	hd := &holder{t: t, serving: make(chan struct{})}
	t.Cleanup(hd.wg.Wait) // after the releases, registered later, ran
	hd.h = wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd.serving <- struct{}{}
		<-r.Context().Value(releaseKey{}).(chan struct{})
	}))
	return hd
}

// hold sends a request and returns, once the handler serves it, the
// function that lets it return; a request answered without reaching the
// handler fails the test.
func (hd *holder) hold(method, url string) (release func()) {
	hd.t.Helper()
	ch := make(chan struct{})
	release = sync.OnceFunc(func() { close(ch) })
	hd.t.Cleanup(release)
	req := httptest.NewRequestWithContext(context.WithValue(hd.t.Context(), releaseKey{}, ch), method, url, nil)
	answered := make(chan int, 1)
	hd.wg.Go(func() {
		w := httptest.NewRecorder()
		hd.h.ServeHTTP(w, req)
		answered <- w.Code
	})
	select {
	case <-hd.serving:
		return release
	case code := <-answered:
		hd.t.Fatalf("%s %s answered %d without being served", method, url, code)
		return nil
	}
}

// rejected sends a request that must be answered 429 at once, as
// kube-apiserver's max-in-flight filter answers it.
func (hd *holder) rejected(method, url string) {
	hd.t.Helper()
	w := httptest.NewRecorder()
	hd.h.ServeHTTP(w, httptest.NewRequest(method, url, nil))
	s := readStatus(hd.t, w.Body.Bytes())
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "1" || s.Reason != metav1.StatusReasonTooManyRequests ||
		s.Message != "Too many requests, please try again later." || s.Details == nil || s.Details.RetryAfterSeconds != 1 {
		hd.t.Fatalf("%s %s beyond the limit: %d, Retry-After %q, %+v", method, url, w.Code, w.Header().Get("Retry-After"), s)
	}
}

// metricValue reads one labelled sample of a gauge or counter.
func metricValue(t *testing.T, reg *prometheus.Registry, name, kind string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "request_kind" && l.GetValue() == kind {
					return m.GetGauge().GetValue() + m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("no %s{request_kind=%q}", name, kind)
	return 0
}

// TestMaxInFlight: beyond the limit of its kind a request is answered at
// once with kube-apiserver's 429 and counted as dropped; the other kind,
// watches and health checks are not held back; a freed seat serves the
// next request.
func TestMaxInFlight(t *testing.T) {
	reg := prometheus.NewRegistry()
	hd := newHolder(t, func(h http.Handler) http.Handler { return withMaxInFlight(2, 1, reg, h) })

	firstRead := hd.hold("GET", "/apis/g/v1/foos")
	hd.hold("GET", "/apis/g/v1/namespaces/ns/foos/x")
	hd.hold("POST", "/apis/g/v1/namespaces/ns/foos")
	if got := metricValue(t, reg, "apiloom_current_inflight_requests", readOnlyKind); got != 2 {
		t.Fatalf("current read-only requests %v, want 2", got)
	}
	hd.rejected("GET", "/apis/g/v1/foos")
	hd.rejected("DELETE", "/apis/g/v1/namespaces/ns/foos/x")
	hd.rejected("PATCH", "/apis/g/v1/namespaces/ns/foos/x")
	if r, m := metricValue(t, reg, "apiloom_dropped_requests_total", readOnlyKind), metricValue(t, reg, "apiloom_dropped_requests_total", mutatingKind); r != 1 || m != 2 {
		t.Fatalf("dropped: %v read-only, %v mutating; want 1 and 2", r, m)
	}

	// Held back by no seat.
	hd.hold("GET", "/apis/g/v1/foos?watch=true")
	hd.hold("GET", "/apis/g/v1/namespaces/ns/foos?watch=1&resourceVersion=0")
	hd.hold("GET", "/readyz")
	hd.hold("GET", "/livez")

	firstRead()
	hd.hold("GET", "/apis/g/v1/foos")
	hd.rejected("GET", "/apis/g/v1/foos")
}

// TestMaxInFlightZeroIsUnlimited: a limit of 0 holds nothing back.
func TestMaxInFlightZeroIsUnlimited(t *testing.T) {
	hd := newHolder(t, func(h http.Handler) http.Handler { return withMaxInFlight(0, 0, prometheus.NewRegistry(), h) })
	for range 50 {
		hd.hold("POST", "/apis/g/v1/foos")
		hd.hold("GET", "/apis/g/v1/foos")
	}
}
