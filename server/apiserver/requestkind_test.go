package apiserver

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/net/http2"
)

// streamsAt stands for the resource handler, which knows the stream
// subresources (endpoints' router; its IsStream has its own tests): here
// every GET of a path ending in /logs is one.
type streamsAt struct{}

func (streamsAt) IsStream(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/logs")
}

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

// TestStreamOutlivesRequestTimeoutHTTP2: a stream subresource, marked
// long-running by withLongRunning, runs past the request timeout over
// our HTTP/2 connection, each flushed Write a DATA frame the client has
// at once. Without withLongRunning the timeout cuts it.
func TestStreamOutlivesRequestTimeoutHTTP2(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rc := http.NewResponseController(w)
			for _, l := range []string{"a\n", "b\n"} {
				_, _ = io.WriteString(w, l)
				if err := rc.Flush(); err != nil {
					t.Errorf("flush: %v", err)
				}
				time.Sleep(2 * testTimeout) // the bubble's clock
			}
		})
		c := serveHTTP2(t, withLongRunning(streamsAt{}, withRequestTimeout(testTimeout, stream)))
		start := time.Now()
		c.request(1, "GET", "/apis/g/v1/namespaces/ns/things/a/logs", -1, "", true)
		var got []string
		for {
			f, err := c.fr.ReadFrame()
			if err != nil {
				t.Fatal(err)
			}
			if f.Header().StreamID != 1 {
				continue
			}
			if h, ok := f.(*http2.MetaHeadersFrame); ok && h.PseudoValue("status") != "200" {
				t.Fatalf("status %s", h.PseudoValue("status"))
			}
			if d, ok := f.(*http2.DataFrame); ok {
				if len(d.Data()) > 0 {
					got = append(got, fmt.Sprintf("%s@%v", d.Data(), time.Since(start)))
				}
				if d.StreamEnded() {
					break
				}
			}
			if _, ok := f.(*http2.RSTStreamFrame); ok {
				t.Fatalf("stream reset after %v", got)
			}
		}
		want := []string{"a\n@0s", fmt.Sprintf("b\n@%v", 2*testTimeout)}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("frames %q, want %q", got, want)
		}
	})
}
