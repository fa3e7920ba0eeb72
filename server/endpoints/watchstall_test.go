package endpoints

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/websocket"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/cache"
	"github.com/apiloom/apiloom/server/endpoints/request"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// stallEnv serves widgets from a watch cache over plain HTTP/1.1, with
// small socket buffers so that a client that does not read stalls the
// server's writes after a few KiB, and a short WatchWriteTimeout.
type stallEnv struct {
	t       *testing.T
	srv     *httptest.Server
	watches *watchRecorder
}

func newStallEnv(t *testing.T, objects int, timeout time.Duration) *stallEnv {
	t.Helper()
	def := storagetest.Definition()
	store := storage.New(storagetest.NewClient(t, etcdtest.Start(t), "/stall-test"), "/registry/widgets", def)
	c, err := cache.New(def, store)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	big := strings.Repeat("x", 8<<10)
	for i := range objects {
		if _, err := c.Create(ctx, storage.Key("ns", fmt.Sprintf("w%04d", i)), storagetest.NewWidget("ns", fmt.Sprintf("w%04d", i), big)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetList(ctx, storage.ListOptions{}); err != nil { // caught up
		t.Fatal(err)
	}
	rec := &watchRecorder{Interface: c, started: make(chan struct{}, 64)}
	limits := request.DefaultLimits()
	limits.WatchWriteTimeout = timeout
	srv := httptest.NewUnstartedServer(NewHandler(NewResource(def, rec, WithLimits(limits))))
	srv.Config.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetWriteBuffer(4 << 10)
		}
		return ctx
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return &stallEnv{t: t, srv: srv, watches: rec}
}

// dialStalled opens a connection that will not read, with a small receive
// buffer.
func (e *stallEnv) dialStalled() net.Conn {
	e.t.Helper()
	conn, err := net.Dial("tcp", e.srv.Listener.Addr().String())
	if err != nil {
		e.t.Fatal(err)
	}
	_ = conn.(*net.TCPConn).SetReadBuffer(4 << 10)
	e.t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// waitStopped waits until the watch w is stopped by the server.
func waitStopped(t *testing.T, w *recordedWatcher, what string) {
	t.Helper()
	deadline := time.Now().Add(eventTimeout)
	for !w.stopped.Load() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: the server still serves a watch whose client reads nothing", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestWatchWriteTimeoutEndsStalledClients starts watches from RV 0 whose
// clients never read, over HTTP/1.1 and WebSocket: once their initial
// events fill the socket, the server must end them within the write
// timeout instead of holding them for the watch's lifetime. A client that
// reads keeps its watch.
func TestWatchWriteTimeoutEndsStalledClients(t *testing.T) {
	e := newStallEnv(t, 200, 300*time.Millisecond)
	path := widgetsPath + "ns/widgets?watch=true&resourceVersion=0"

	reading, err := http.Get(e.srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer reading.Body.Close()
	e.watches.waitStarted(t)
	readingWatch := e.watches.last(t)
	go func() { _, _ = io.Copy(io.Discard, reading.Body) }()

	t.Run("HTTP/1.1", func(t *testing.T) {
		conn := e.dialStalled()
		fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path)
		e.watches.waitStarted(t)
		waitStopped(t, e.watches.last(t), "HTTP/1.1")
	})

	t.Run("WebSocket", func(t *testing.T) {
		conn := e.dialStalled()
		cfg, err := websocket.NewConfig(strings.Replace(e.srv.URL, "http", "ws", 1)+path, e.srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		// The handshake's answer is read; the messages after it never are.
		fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
			"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nOrigin: %s\r\n\r\n", path, cfg.Origin)
		e.watches.waitStarted(t)
		waitStopped(t, e.watches.last(t), "WebSocket")
	})

	if readingWatch.stopped.Load() {
		t.Error("the watch of a client that reads was ended")
	}
}

// TestWatchNegativeTimeoutEndsAtOnce: timeoutSeconds below zero is a watch
// that has already timed out; kube-apiserver answers 200 and ends the
// stream at once, where a default timeout of 30 minutes or more used to
// apply.
func TestWatchNegativeTimeoutEndsAtOnce(t *testing.T) {
	e := newStallEnv(t, 1, time.Minute)
	ctx, cancel := context.WithTimeout(t.Context(), eventTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", e.srv.URL+widgetsPath+"ns/widgets?watch=true&timeoutSeconds=-5", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(bufio.NewReader(resp.Body))
	if err != nil {
		t.Fatalf("the stream did not end: %v", err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" || len(body) != 0 {
		t.Errorf("got %d %q %q, want 200, application/json and no events", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
}
