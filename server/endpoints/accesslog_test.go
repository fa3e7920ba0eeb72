package endpoints

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/server/detach"
	"github.com/apiloom/apiloom/server/internal/h2"
)

// accessLog is a middleware as anyone would write one, that knows nothing
// of watches or HTTP/2: it records each request's duration, through
// detach.Observe.
type accessLog struct {
	next     http.Handler
	returned atomic.Bool // the handler of the last request returned
	mu       sync.Mutex
	ends     map[string]time.Duration // path+query -> duration, once ended
}

func (l *accessLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start, key := time.Now(), r.URL.RequestURI()
	ow, done := detach.Observe(w, func() {
		l.mu.Lock()
		l.ends[key] = time.Since(start)
		l.mu.Unlock()
	})
	l.next.ServeHTTP(ow, r)
	l.returned.Store(true)
	done()
}

func (l *accessLog) ended(key string) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	d, ok := l.ends[key]
	return d, ok
}

// TestAccessLogSeesWatchEnd: a watch served as a detached body over our
// HTTP/2 connection is recorded by a plain middleware when its stream
// ends, not when its handler returned (at once), with its true duration.
func TestAccessLogSeesWatchEnd(t *testing.T) {
	e := newSourceEnv(t)
	log := &accessLog{next: e.handler, ends: map[string]time.Duration{}}
	ts := httptest.NewUnstartedServer(log)
	h2.Configure(ts.Config, &h2.Server{})
	ts.TLS = ts.Config.TLSConfig
	ts.StartTLS()
	t.Cleanup(ts.Close)
	tr := &http.Transport{ForceAttemptHTTP2: true, TLSClientConfig: ts.Client().Transport.(*http.Transport).TLSClientConfig}
	t.Cleanup(tr.CloseIdleConnections)

	e.create("a")
	key := widgetsPath + "ns/widgets?watch=true&resourceVersion=0&timeoutSeconds=1"
	req, err := http.NewRequestWithContext(e.ctx, "GET", ts.URL+key, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	var ev metav1.WatchEvent
	if err := dec.Decode(&ev); err != nil || ev.Type != "ADDED" {
		t.Fatalf("first event %s: %v", ev.Type, err)
	}
	if !handlerReturned(t, &log.returned) {
		t.Fatal("the watch was not detached: its handler has not returned")
	}
	if d, ok := log.ended(key); ok {
		t.Fatalf("the log recorded the watch as ended after %v while it streams", d)
	}
	if err := dec.Decode(&ev); !errors.Is(err, io.EOF) {
		t.Fatalf("after the timeout: %v", err)
	}
	// The stream has ended for the client; the connection closes the
	// Source right after its last frame.
	deadline := time.Now().Add(eventTimeout)
	for {
		if d, ok := log.ended(key); ok {
			if d < time.Second {
				t.Errorf("recorded duration %v, shorter than the watch's 1s", d)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the log never saw the watch end")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
