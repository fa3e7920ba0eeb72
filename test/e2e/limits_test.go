package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/apiloom/apiloom/generated/clientset/versioned"
	"github.com/apiloom/apiloom/server/apiserver"
	"github.com/apiloom/apiloom/server/testserver"
)

// End-to-end tests of the request limits: --request-timeout,
// --max-requests-inflight / --max-mutating-requests-inflight and
// --watch-write-timeout, with short values, against a real server.

const databasesPath = "/apis/example.apiloom.dev/v1/namespaces/shop/databases"

func withOptions(f func(*apiserver.Options)) testserver.Option { return testserver.Option(f) }

// clients returns an HTTP/1.1 and an HTTP/2 client of ts.
func clients(t *testing.T, ts *testserver.TestServer) map[string]*http.Client {
	h1 := &http.Transport{TLSClientConfig: tlsConfig(t, ts, "http/1.1"), TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{}}
	h2 := &http2.Transport{TLSClientConfig: tlsConfig(t, ts, "h2")}
	t.Cleanup(h1.CloseIdleConnections)
	t.Cleanup(h2.CloseIdleConnections)
	return map[string]*http.Client{"HTTP/1.1": {Transport: h1}, "HTTP/2": {Transport: h2}}
}

// answer is a response to a request whose body was never finished.
type answer struct {
	code       int
	retryAfter string
	status     metav1.Status
	after      time.Duration
}

// slowCreate sends a create whose body declares 100 bytes, of which it
// sends one: a client sending its body a byte a second, stopped. It
// returns what the server answered and when.
func slowCreate(t *testing.T, ts *testserver.TestServer, c *http.Client, query string) answer {
	t.Helper()
	pr, pw := io.Pipe()
	defer pw.Close()
	go func() { _, _ = pw.Write([]byte("{")) }() // and nothing more
	// A bound for a server that would hold the request for good.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ts.Config.Host+databasesPath+query, pr)
	if err != nil {
		t.Error(err)
		return answer{}
	}
	req.ContentLength = 100
	req.Header.Set("Authorization", "Bearer "+ts.Config.BearerToken)
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		t.Errorf("slow create: %v", err)
		return answer{}
	}
	defer resp.Body.Close()
	a := answer{code: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), after: time.Since(start)}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Errorf("read %d answer: %v", resp.StatusCode, err)
	}
	if err := json.Unmarshal(body, &a.status); err != nil {
		t.Errorf("answer %d %q is not a Status: %v", resp.StatusCode, body, err)
	}
	return a
}

// TestSlowBodyEndsAtTheRequestTimeout: a create whose client sends one
// byte of its body and stops is answered kube-apiserver's 504 Timeout
// Status at --request-timeout, over HTTP/1.1 and HTTP/2, and its handler
// returns (it lets go of its in-flight seat); ?timeout= shortens it.
func TestSlowBodyEndsAtTheRequestTimeout(t *testing.T) {
	const timeout = 2 * time.Second
	ts, _ := startServer(t, withOptions(func(o *apiserver.Options) { o.RequestTimeout = timeout }))
	check := func(t *testing.T, a answer, want time.Duration) {
		t.Helper()
		s := a.status
		if a.code != http.StatusGatewayTimeout || s.Code != http.StatusGatewayTimeout || s.Reason != metav1.StatusReasonTimeout ||
			s.Message != "Timeout: request did not complete within the allotted timeout" {
			t.Fatalf("answer %d %+v, want kube-apiserver's 504 Timeout", a.code, s)
		}
		if a.after < want || a.after > want+15*time.Second {
			t.Fatalf("answered after %v, want %v", a.after, want)
		}
	}
	for proto, c := range clients(t, ts) {
		t.Run(proto, func(t *testing.T) {
			check(t, slowCreate(t, ts, c, ""), timeout)
			check(t, slowCreate(t, ts, c, "?timeout=500ms"), 500*time.Millisecond)
		})
	}
	eventually(t, "the slow creates' handlers to return", func(context.Context) (bool, error) {
		return metric(t, ts.Config, "apiloom_current_inflight_requests", `request_kind="mutating"`) == 0, nil
	})
}

// TestWatchOutlivesTheRequestTimeout: watches, over HTTP/2 (detached to
// the connection) and HTTP/1.1 (streamed by the handler), are not cut by
// --request-timeout.
func TestWatchOutlivesTheRequestTimeout(t *testing.T) {
	const timeout = time.Second
	ts, cs := startServer(t, withOptions(func(o *apiserver.Options) { o.RequestTimeout = timeout }))
	ts.CreateNamespaces(t, "shop")
	h1 := rest.CopyConfig(ts.Config)
	h1.NextProtos = []string{"http/1.1"}
	watches := map[string]watch.Interface{}
	for proto, cfg := range map[string]*rest.Config{"HTTP/2": ts.Config, "HTTP/1.1": h1} {
		w, err := versioned.NewForConfigOrDie(cfg).ExampleV1().Databases("shop").Watch(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatalf("%s watch: %v", proto, err)
		}
		t.Cleanup(w.Stop)
		watches[proto] = w
	}
	// The time under test, not a synchronisation: the watches must live
	// through three request timeouts.
	time.Sleep(3 * timeout)
	if _, err := cs.ExampleV1().Databases("shop").Create(t.Context(), newDatabase("late"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for proto, w := range watches {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok || ev.Type != watch.Added {
				t.Fatalf("%s watch after %v: %v %v, want the create's ADDED", proto, 3*timeout, ev.Type, ok)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s watch: no event", proto)
		}
	}
}

// TestMutatingRequestsBeyondTheLimit: with --max-mutating-requests-inflight
// 1 held by a slow create, another create waits a quarter of the request
// timeout for the seat and is answered kube-apiserver's 429; client-go
// retries it by itself until the seat is free; reads and health checks
// are not held back.
func TestMutatingRequestsBeyondTheLimit(t *testing.T) {
	const timeout = 4 * time.Second // the queue wait is 1s
	// Without leader election and controllers: Lease renewals and the
	// controllers' writes (the clusterrole-aggregation controller's at
	// start) would take the one mutating seat's place in the queue.
	ts, cs := startServer(t, testserver.WithElection(false), testserver.WithControllers(), withOptions(func(o *apiserver.Options) {
		o.RequestTimeout = timeout
		o.MaxMutatingRequestsInFlight = 1
		o.EnablePriorityAndFairness = false // the max-in-flight limit, APF's fallback
	}))
	ts.CreateNamespaces(t, "shop")
	c := clients(t, ts)["HTTP/2"]
	held := make(chan answer, 1)
	go func() { held <- slowCreate(t, ts, c, "") }()
	eventually(t, "the slow create to hold the seat", func(context.Context) (bool, error) {
		return metric(t, ts.Config, "apiloom_current_inflight_requests", `request_kind="mutating"`) == 1, nil
	})

	a := slowCreate(t, ts, c, "")
	if s := a.status; a.code != http.StatusTooManyRequests || a.retryAfter != "1" || s.Reason != metav1.StatusReasonTooManyRequests ||
		s.Message != "Too many requests, please try again later." || s.Details == nil || s.Details.RetryAfterSeconds != 1 {
		t.Fatalf("a create beyond the limit: %d, Retry-After %q, %+v; want kube-apiserver's 429", a.code, a.retryAfter, s)
	}
	if a.after < timeout/4 {
		t.Fatalf("answered 429 after %v, before waiting %v for the seat", a.after, timeout/4)
	}
	if _, err := cs.ExampleV1().Databases("shop").List(t.Context(), metav1.ListOptions{}); err != nil {
		t.Fatalf("a LIST while the mutating seat is taken: %v", err)
	}
	resp, err := c.Get(ts.Config.Host + "/readyz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/readyz while the mutating seat is taken: %v %v", resp, err)
	}
	resp.Body.Close()

	// client-go waits out each 429 and retries, until the slow create
	// times out and frees the seat.
	if _, err := cs.ExampleV1().Databases("shop").Create(t.Context(), newDatabase("patient"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("client-go's create: %v", err)
	}
	if a := <-held; a.code != http.StatusGatewayTimeout {
		t.Fatalf("the slow create: %d", a.code)
	}
	if n := metric(t, ts.Config, "apiloom_dropped_requests_total", `request_kind="mutating"`); n < 2 {
		t.Fatalf("%v mutating requests dropped, want at least 2 (ours and client-go's first try)", n)
	}
}

// TestStarvedWatchIsReset: an HTTP/2 watch whose client grants it no
// window while it has events to send is reset after --watch-write-timeout,
// and lets go of its watcher; a watch on the same connection that reads,
// and has been idle for longer than the timeout, is not, and still
// delivers the next event. Our connection carries the watch and resets it
// with CANCEL; over Go's HTTP/2 the watch handler's own write deadline
// resets it with INTERNAL_ERROR.
func TestStarvedWatchIsReset(t *testing.T) {
	for _, cache := range []bool{true, false} {
		t.Run(fmt.Sprintf("watch-cache=%t", cache), func(t *testing.T) { testStarvedWatchIsReset(t, cache) })
	}
}

func testStarvedWatchIsReset(t *testing.T, cache bool) {
	const writeTimeout = 2 * time.Second
	// No controllers: their informers would watch databases too.
	ts, cs := startServer(t, testserver.WithControllers(), withOptions(func(o *apiserver.Options) { o.WatchWriteTimeout = writeTimeout; o.WatchCache = cache }))
	ts.CreateNamespaces(t, "shop")
	wantCode := http2.ErrCodeCancel
	if http2Server(t) == apiserver.HTTP2ServerGo {
		wantCode = http2.ErrCodeInternal
	}
	if _, err := cs.ExampleV1().Databases("shop").Create(t.Context(), newDatabase("orders"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	nc, err := tls.Dial("tcp", strings.TrimPrefix(ts.Config.Host, "https://"), tlsConfig(t, ts, "h2"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(60 * time.Second))
	fr := http2.NewFramer(nc, nc)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	if _, err := nc.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	// No stream gets window of its own until the client grants it.
	if err := fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0}); err != nil {
		t.Fatal(err)
	}
	var hbuf bytes.Buffer
	enc := hpack.NewEncoder(&hbuf)
	open := func(id uint32) {
		hbuf.Reset()
		for _, f := range [][2]string{{":method", "GET"}, {":scheme", "https"}, {":authority", "x"},
			{":path", databasesPath + "?watch=true&resourceVersion=0"}, {"authorization", "Bearer " + ts.Config.BearerToken}} {
			_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
		}
		if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hbuf.Bytes(), EndStream: true, EndHeaders: true}); err != nil {
			t.Fatal(err)
		}
	}
	// next reads frames until stream 1 has sent data containing want (or,
	// with want "", until stream 3 is reset); it fails on any other reset.
	next := func(want string) {
		t.Helper()
		for {
			f, err := fr.ReadFrame()
			if err != nil {
				t.Fatalf("read frame: %v", err)
			}
			switch f := f.(type) {
			case *http2.SettingsFrame:
				if !f.IsAck() {
					_ = fr.WriteSettingsAck()
				}
			case *http2.DataFrame:
				if f.StreamID == 1 && want != "" && bytes.Contains(f.Data(), []byte(want)) {
					return
				}
			case *http2.GoAwayFrame:
				t.Fatalf("GOAWAY %v %q", f.ErrCode, f.DebugData())
			case *http2.RSTStreamFrame:
				if f.StreamID != 3 || want != "" {
					t.Fatalf("stream %d reset with %v: only the starved stream 3 may be, not the reading one, however long it idles", f.StreamID, f.ErrCode)
				}
				if f.ErrCode != wantCode {
					t.Fatalf("the starved stream reset with %v, want %v", f.ErrCode, wantCode)
				}
				return
			}
		}
	}
	open(1) // reads: it gets window for each event
	if err := fr.WriteWindowUpdate(1, 1<<20); err != nil {
		t.Fatal(err)
	}
	next(`"name":"orders"`)
	start := time.Now()
	open(3) // starved: its first event waits for window
	next("")
	if waited := time.Since(start); waited < writeTimeout {
		t.Fatalf("reset after %v, before --watch-write-timeout %v", waited, writeTimeout)
	}
	// Stream 1 has sent nothing for longer than the timeout now.
	if _, err := cs.ExampleV1().Databases("shop").Create(t.Context(), newDatabase("payments"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	next(`"name":"payments"`)
	if cache {
		eventually(t, "the reset watch's watcher to go", func(context.Context) (bool, error) {
			return metric(t, ts.Config, "apiloom_watch_cache_watchers", `resource="databases.example.apiloom.dev"`) == 1, nil
		})
	}
}
