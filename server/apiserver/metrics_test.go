package apiserver

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/apiloom/apiloom/server/detach"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct{ method, url, verb, resource string }{
		{"GET", "/apis/g/v1/namespaces/ns/foos", "list", "foos"},
		{"GET", "/apis/g/v1/foos?watch=true", "watch", "foos"},
		{"GET", "/apis/g/v1/namespaces/ns/foos/x", "get", "foos"},
		{"PUT", "/apis/g/v1/namespaces/ns/foos/x/status", "update", "foos/status"},
		{"PATCH", "/apis/g/v1/foos/x", "patch", "foos"},
		{"POST", "/apis/g/v1/namespaces/ns/foos", "create", "foos"},
		{"DELETE", "/apis/g/v1/namespaces/ns/foos/x", "delete", "foos"},
		{"DELETE", "/apis/g/v1/namespaces/ns/foos", "deletecollection", "foos"},
		{"GET", "/apis/g/v1", "get", "other"},
		{"GET", "/openapi/v3", "get", "other"},
	} {
		verb, resource := classify(httptest.NewRequest(tc.method, tc.url, nil))
		if verb != tc.verb || resource != tc.resource {
			t.Errorf("%s %s: got %s %s, want %s %s", tc.method, tc.url, verb, resource, tc.verb, tc.resource)
		}
	}
}

// detachingWriter is an HTTP/2 ResponseWriter that takes a Source.
type detachingWriter struct {
	*httptest.ResponseRecorder
	src detach.Source
}

func (d *detachingWriter) DetachBody(src detach.Source) { d.src = src }

type nopSource struct{ closed bool }

func (*nopSource) Append(dst []byte, _ int) ([]byte, bool) { return dst, false }
func (*nopSource) Start(func())                            {}
func (s *nopSource) Close()                                { s.closed = true }

// TestDetachedWatchIsTimedUntilItsStreamEnds: a watch handed to the
// connection is observed when its source closes, not when its handler
// returns.
func TestDetachedWatchIsTimedUntilItsStreamEnds(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := withRequestMetrics(reg, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(detach.Detacher).DetachBody(&nopSource{})
	}))
	w := &detachingWriter{ResponseRecorder: httptest.NewRecorder()}
	h.ServeHTTP(w, httptest.NewRequest("GET", "/apis/g/v1/foos?watch=true", nil))
	count := func() uint64 {
		t.Helper()
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		var n uint64
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				n += m.GetHistogram().GetSampleCount()
			}
		}
		return n
	}
	if w.src == nil {
		t.Fatal("the source did not reach the connection's writer")
	}
	if n := count(); n != 0 {
		t.Fatalf("%d observations before the stream ended", n)
	}
	w.src.Close()
	if n := count(); n != 1 {
		t.Fatalf("%d observations after the stream ended, want 1", n)
	}
}
