package apiserver

import (
	"bufio"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/apiloom/apiloom/server/detach"
)

// withRequestMetrics records request latency by verb, resource and code,
// the figures kube-apiserver exports as apiserver_request_duration_seconds.
// Watches are measured until their stream ends.
func withRequestMetrics(reg prometheus.Registerer, next http.Handler) http.Handler {
	latency := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "apiloom_request_duration_seconds",
		Help:    "Request latency by verb, resource and HTTP code. Watches count until the stream ends.",
		Buckets: []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60},
	}, []string{"verb", "resource", "code"})
	reg.MustRegister(latency)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		obs := &observation{latency: latency, start: time.Now(), code: http.StatusOK}
		obs.verb, obs.resource = classify(r)
		rec := &codeRecorder{ResponseWriter: w, code: &obs.code}
		ow, done := detach.Observe(rec, obs.end)
		next.ServeHTTP(ow, r)
		done()
	})
}

// observation is one request's latency sample. Its end keeps only this,
// not the writers: for a detached body (an idle watch) it is held until
// the stream ends.
type observation struct {
	latency        *prometheus.HistogramVec
	verb, resource string
	start          time.Time
	code           int // set by the codeRecorder
}

func (o *observation) end() {
	o.latency.WithLabelValues(o.verb, o.resource, strconv.Itoa(o.code)).Observe(time.Since(o.start).Seconds())
}

// classify names the Kubernetes verb and resource of a request from its
// method and path, keeping label cardinality bounded.
func classify(r *http.Request) (verb, resource string) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) < 4 || parts[0] != "apis" {
		return strings.ToLower(r.Method), "other"
	}
	rest := parts[3:]
	if rest[0] == "namespaces" && len(rest) >= 3 {
		rest = rest[2:]
	}
	resource, named := rest[0], len(rest) > 1
	if len(rest) > 2 {
		resource += "/" + rest[2]
	}
	switch r.Method {
	case http.MethodGet:
		switch {
		case r.URL.Query().Get("watch") == "true" || r.URL.Query().Get("watch") == "1":
			verb = "watch"
		case named:
			verb = "get"
		default:
			verb = "list"
		}
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	case http.MethodPatch:
		verb = "patch"
	case http.MethodDelete:
		if named {
			verb = "delete"
		} else {
			verb = "deletecollection"
		}
	default:
		verb = strings.ToLower(r.Method)
	}
	return verb, resource
}

// codeRecorder remembers the status code and keeps Flush reachable, which
// watch streaming needs.
type codeRecorder struct {
	http.ResponseWriter
	code *int
}

func (c *codeRecorder) WriteHeader(code int) {
	*c.code = code
	c.ResponseWriter.WriteHeader(code)
}

func (c *codeRecorder) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Hijack passes through for WebSocket watches, whose library asserts
// http.Hijacker directly.
func (c *codeRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(c.ResponseWriter).Hijack()
}

// Unwrap lets http.ResponseController reach the connection (WebSocket hijack).
func (c *codeRecorder) Unwrap() http.ResponseWriter { return c.ResponseWriter }
