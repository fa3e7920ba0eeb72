package apiserver

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// streamsAt is a longRunningChecker for the paths ending in /logs.
type streamsAt struct{}

func (streamsAt) IsLongRunning(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/logs") }

// TestWithLongRunning: a stream the resource handler knows of is
// long-running for every filter after withLongRunning, as watches are;
// other requests are not.
func TestWithLongRunning(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		want         bool
	}{
		{"GET", "/apis/g/v1/namespaces/ns/things/a/logs", true},
		{"POST", "/apis/g/v1/namespaces/ns/things/a/logs", false},
		{"GET", "/apis/g/v1/namespaces/ns/things/a", false},
		{"GET", "/apis/g/v1/namespaces/ns/things?watch=1", true},
		{"GET", "/debug/pprof/profile", true},
	} {
		var got bool
		h := withLongRunning(streamsAt{}, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = longRunning(r) }))
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(tc.method, tc.path, nil))
		if got != tc.want {
			t.Errorf("%s %s: long-running %v, want %v", tc.method, tc.path, got, tc.want)
		}
	}
}
