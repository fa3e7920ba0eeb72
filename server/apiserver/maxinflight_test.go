package apiserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/endpoints"
)

// Tests of withMaxInFlight, in synctest bubbles: how long a request waits
// for seats is checked against the bubble's clock.

const testQueueWait = 3 * time.Second

// holder serves requests through a handler that holds each until it is
// released.
type holder struct {
	t       *testing.T
	h       http.Handler
	reg     *prometheus.Registry
	serving chan string
	wg      sync.WaitGroup
}

type releaseKey struct{}

func newHolder(t *testing.T, cfg inFlight) *holder {
	// Buffered, so that a handler a failed test no longer reads from can
	// still return.
	hd := &holder{t: t, reg: prometheus.NewRegistry(), serving: make(chan string, 100)}
	t.Cleanup(hd.wg.Wait) // after the releases, registered later, ran
	hd.h = withMaxInFlight(cfg, hd.reg, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd.serving <- r.Method + " " + r.URL.String()
		<-r.Context().Value(releaseKey{}).(chan struct{})
	}))
	return hd
}

// call is one request sent through the holder: release lets its handler
// return, answered gives its status once it did, cancel ends its context.
type call struct {
	release  func()
	answered chan int
	cancel   context.CancelFunc
}

// send sends a request without waiting for it.
func (hd *holder) send(method, url string) *call {
	ch := make(chan struct{})
	ctx, cancel := context.WithCancel(context.WithValue(hd.t.Context(), releaseKey{}, ch))
	c := &call{release: sync.OnceFunc(func() { close(ch) }), answered: make(chan int, 1), cancel: cancel}
	hd.t.Cleanup(c.release)
	hd.t.Cleanup(cancel)
	req := httptest.NewRequestWithContext(ctx, method, url, nil)
	hd.wg.Go(func() {
		w := httptest.NewRecorder()
		hd.h.ServeHTTP(w, req)
		if w.Code == http.StatusTooManyRequests {
			checkTooManyRequests(hd.t, w)
		}
		c.answered <- w.Code
	})
	return c
}

// hold sends a request and waits until the handler serves it.
func (hd *holder) hold(method, url string) *call {
	hd.t.Helper()
	c := hd.send(method, url)
	select {
	case got := <-hd.serving:
		if got != method+" "+url {
			hd.t.Fatalf("served %s, want %s", got, method+" "+url)
		}
	case code := <-c.answered:
		hd.t.Fatalf("%s %s answered %d without being served", method, url, code)
	}
	return c
}

// waits sends a request and checks that it waits for seats.
func (hd *holder) waits(method, url string) *call {
	hd.t.Helper()
	c := hd.send(method, url)
	synctest.Wait()
	select {
	case got := <-hd.serving:
		hd.t.Fatalf("%s served at once", got)
	case code := <-c.answered:
		hd.t.Fatalf("%s %s answered %d at once", method, url, code)
	default:
	}
	return c
}

// served checks that the handler now serves these requests (GETs), and
// no other, in any order.
func (hd *holder) served(urls ...string) {
	hd.t.Helper()
	synctest.Wait()
	want := map[string]bool{}
	for _, u := range urls {
		want["GET "+u] = true
	}
	for len(want) > 0 {
		select {
		case got := <-hd.serving:
			if !want[got] {
				hd.t.Fatalf("served %s, want %v", got, urls)
			}
			delete(want, got)
		default:
			hd.t.Fatalf("not served: %v", want)
		}
	}
	select {
	case got := <-hd.serving:
		hd.t.Fatalf("served %s too", got)
	default:
	}
}

// checkTooManyRequests checks kube-apiserver's 429.
func checkTooManyRequests(t *testing.T, w *httptest.ResponseRecorder) {
	s := readStatus(t, w.Body.Bytes())
	if w.Header().Get("Retry-After") != "1" || s.Reason != metav1.StatusReasonTooManyRequests ||
		s.Message != "Too many requests, please try again later." || s.Details == nil || s.Details.RetryAfterSeconds != 1 {
		t.Errorf("429: Retry-After %q, %+v; want kube-apiserver's", w.Header().Get("Retry-After"), s)
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

// TestRequestsBeyondTheLimitWaitThenGet429: a request that finds no seat
// waits for one, in order, for at most the queue wait, and is then
// answered kube-apiserver's 429 and counted; when the queue is full it is
// answered at once. Each kind has its own seats.
func TestRequestsBeyondTheLimitWaitThenGet429(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hd := newHolder(t, inFlight{readOnly: 2, mutating: 1, maxWait: testQueueWait})
		first := hd.hold("GET", "/apis/g/v1/namespaces/ns/foos/a")
		hd.hold("GET", "/apis/g/v1/namespaces/ns/foos/b")
		hd.hold("POST", "/apis/g/v1/namespaces/ns/foos")
		if got := metricValue(t, hd.reg, "apiloom_current_inflight_requests", readOnlyKind); got != 2 {
			t.Fatalf("read-only requests served: %v, want 2", got)
		}

		start := time.Now()
		timedOut := hd.waits("GET", "/apis/g/v1/namespaces/ns/foos/c")
		time.Sleep(time.Second)
		hd.waits("GET", "/apis/g/v1/namespaces/ns/foos/d")
		if got := metricValue(t, hd.reg, "apiloom_current_inqueue_requests", readOnlyKind); got != 2 {
			t.Fatalf("read-only requests waiting: %v, want 2", got)
		}
		full := hd.send("GET", "/apis/g/v1/namespaces/ns/foos/e") // the queue holds as many as there are seats
		if code := <-full.answered; code != http.StatusTooManyRequests || time.Since(start) != time.Second {
			t.Fatalf("beyond a full queue: %d after waiting %v", code, time.Since(start)-time.Second)
		}
		if code := <-timedOut.answered; code != http.StatusTooManyRequests || time.Since(start) != testQueueWait {
			t.Fatalf("a request that found no seat: %d after %v, want 429 after %v", code, time.Since(start), testQueueWait)
		}
		first.release()
		hd.served("/apis/g/v1/namespaces/ns/foos/d")

		if r, m := metricValue(t, hd.reg, "apiloom_dropped_requests_total", readOnlyKind), metricValue(t, hd.reg, "apiloom_dropped_requests_total", mutatingKind); r != 2 || m != 0 {
			t.Fatalf("dropped: %v read-only, %v mutating; want 2 and 0", r, m)
		}
		hd.waits("DELETE", "/apis/g/v1/namespaces/ns/foos/x")
	})
}

// TestWatchesAndHealthChecksTakeNoSeat: with every seat taken, watches and
// health checks are still served at once.
func TestWatchesAndHealthChecksTakeNoSeat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hd := newHolder(t, inFlight{readOnly: 1, mutating: 1, maxWait: testQueueWait})
		hd.hold("GET", "/apis/g/v1/foos/a")
		hd.hold("PUT", "/apis/g/v1/foos/a")
		hd.hold("GET", "/apis/g/v1/foos?watch=true")
		hd.hold("GET", "/apis/g/v1/namespaces/ns/foos?watch=1&resourceVersion=0")
		hd.hold("GET", "/readyz")
		hd.hold("GET", "/livez")
		hd.hold("GET", "/healthz")
	})
}

// TestLargeListsTakeMoreSeats: a LIST takes a seat per 100 objects it
// reads, up to 10, and 10 when its size is unknown; a waiting LIST is not
// passed over by smaller reads queued after it.
func TestLargeListsTakeMoreSeats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sizes := map[string]int{"/apis/g/v1/big": 10000, "/apis/g/v1/mid": 250, "/apis/g/v1/small": 1}
		hd := newHolder(t, inFlight{readOnly: 12, mutating: 1, maxWait: time.Hour, readSize: func(r *http.Request) (int, bool) {
			n, ok := sizes[r.URL.Path]
			return n, ok
		}})
		big := hd.hold("GET", "/apis/g/v1/big")    // 10 seats
		hd.hold("GET", "/apis/g/v1/small")         // 1
		hd.waits("GET", "/apis/g/v1/mid")          // 3 > the 1 left
		hd.waits("GET", "/apis/g/v1/small?second") // fits, but queued behind mid
		big.release()
		hd.served("/apis/g/v1/mid", "/apis/g/v1/small?second")
		hd.waits("GET", "/apis/g/v1/unknown") // 10
	})
}

// TestWaitEndsWithTheRequest: a request whose client leaves while it
// waits leaves the queue, and the one behind it moves up.
func TestWaitEndsWithTheRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hd := newHolder(t, inFlight{readOnly: 2, mutating: 1, maxWait: time.Hour})
		first := hd.hold("GET", "/apis/g/v1/foos/a")
		hd.hold("GET", "/apis/g/v1/foos/b")
		gone := hd.waits("GET", "/apis/g/v1/foos/c")
		hd.waits("GET", "/apis/g/v1/foos/d")
		gone.cancel()
		<-gone.answered
		first.release()
		hd.served("/apis/g/v1/foos/d")
		if got := metricValue(t, hd.reg, "apiloom_current_inqueue_requests", readOnlyKind); got != 0 {
			t.Fatalf("requests still waiting: %v", got)
		}
	})
}

// TestMaxInFlightZeroIsUnlimited: a limit of 0 holds nothing back.
func TestMaxInFlightZeroIsUnlimited(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hd := newHolder(t, inFlight{maxWait: testQueueWait})
		for range 50 {
			hd.hold("POST", "/apis/g/v1/foos")
			hd.hold("GET", "/apis/g/v1/foos")
		}
	})
}

// TestResourcesHandlerSizesReads: the handler Run mounts under /apis/
// tells the in-flight limits how many objects a read reads, or every
// LIST would cost one seat.
func TestResourcesHandlerSizesReads(t *testing.T) {
	if _, ok := endpoints.NewHandler().(readSizer); !ok {
		t.Fatal("endpoints.NewHandler's handler has no ReadSize")
	}
}
