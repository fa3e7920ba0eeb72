package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/websocket"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
)

// TestCustomSubresourceStreamTransports reads a following logs stream over
// HTTP/1.1 (chunked), HTTP/2 and WebSocket: the tail at once, each as
// plain text.
func TestCustomSubresourceStreamTransports(t *testing.T) {
	cs, _, ts := subresourceFixture(t)
	if _, err := cs.ExampleV1().Databases("default").Backup(t.Context(), "orders", &examplev1.BackupRequest{Destination: "s3://b", Name: "first"}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const logs = dbPath + "orders/logs?follow=true"
	get := func(t *testing.T, client *http.Client) *http.Response {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, ts.Config.Host+logs, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+ts.Config.BearerToken)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = resp.Body.Close() })
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
			t.Fatalf("logs: %s %q", resp.Status, resp.Header.Get("Content-Type"))
		}
		line, err := readLine(bufio.NewReader(resp.Body))
		if err != nil || !strings.Contains(line, "BackupRequested: backup first to s3://b") {
			t.Fatalf("first line %q: %v", line, err)
		}
		return resp
	}
	t.Run("http1.1-chunked", func(t *testing.T) {
		tr := &http.Transport{TLSClientConfig: tlsConfig(t, ts, "http/1.1"), TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{}}
		defer tr.CloseIdleConnections()
		resp := get(t, &http.Client{Transport: tr})
		if resp.ProtoMajor != 1 || len(resp.TransferEncoding) == 0 || resp.TransferEncoding[0] != "chunked" {
			t.Fatalf("proto %s, transfer-encoding %v; want HTTP/1.1 chunked", resp.Proto, resp.TransferEncoding)
		}
	})
	t.Run("http2", func(t *testing.T) {
		tr := &http2.Transport{TLSClientConfig: tlsConfig(t, ts, "h2", "http/1.1")}
		defer tr.CloseIdleConnections()
		if resp := get(t, &http.Client{Transport: tr}); resp.ProtoMajor != 2 {
			t.Fatalf("proto %s, want HTTP/2", resp.Proto)
		}
	})
	t.Run("websocket", func(t *testing.T) {
		ws := dialWebSocket(t, ts, logs)
		defer ws.Close()
		// The first message is empty, as kube-apiserver's wsstream starts
		// pods/log: the line comes next.
		var msg string
		for msg == "" {
			if err := websocket.Message.Receive(ws, &msg); err != nil {
				t.Fatalf("receive: %v", err)
			}
		}
		if !strings.Contains(msg, "BackupRequested: backup first to s3://b") {
			t.Fatalf("message %q", msg)
		}
	})
}

// maxStreamBytes bounds what one idle follow stream holds, the server's
// side and the client's together (both run in this process): its
// goroutines' stacks, its HTTP/2 stream, its watch of Events, its reader.
// Measured (live heap and stacks): 39-41 KiB without -race at 1,000
// streams, 60 KiB with it at 200.
const maxStreamBytes = 96 << 10

// TestManyFollowStreams holds followStreams idle follow streams at once
// over client-go (HTTP/2): each gets a new line, the memory they hold
// stays within maxStreamBytes a stream, and once the clients go away
// every stream's goroutine ends and their memory is freed.
func TestManyFollowStreams(t *testing.T) {
	cs, _, _ := subresourceFixture(t)
	ctx := t.Context()
	before, goroutines := heapAndStacks(), runtime.NumGoroutine()
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	readers := make([]*bufio.Reader, followStreams)
	var wg sync.WaitGroup
	errs := make(chan error, followStreams)
	for i := range followStreams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stream, err := logsRequest(cs, map[string]string{"follow": "true"}).Stream(sctx)
			if err != nil {
				errs <- err
				return
			}
			readers[i] = bufio.NewReaderSize(stream, 256)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("opening a stream: %v", err)
	}
	eventually(t, "every stream to follow", func(context.Context) (bool, error) { return streamGoroutines(t) == followStreams, nil })
	held := heapAndStacks() - before
	perStream := held / followStreams
	t.Logf("%d idle follow streams hold %d KiB: %d bytes a stream (both ends)", followStreams, held>>10, perStream)
	if perStream > maxStreamBytes {
		t.Errorf("%d bytes a stream, want at most %d", perStream, maxStreamBytes)
	}

	if _, err := cs.ExampleV1().Databases("default").Backup(ctx, "orders", &examplev1.BackupRequest{Destination: "s3://b", Name: "fan-out"}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i, r := range readers {
		if line, err := readLine(r); err != nil || !strings.Contains(line, "backup fan-out ") {
			t.Fatalf("stream %d: %q %v", i, line, err)
		}
	}
	cancel()
	eventually(t, "every stream's goroutine to end", func(context.Context) (bool, error) { return streamGoroutines(t) == 0, nil })
	// And every goroutine and the memory they held: the server's HTTP/2
	// handler goroutines wait 5s for a next request before they exit
	// (package h2's workers); then what is left over the start is at most
	// a third of what the streams held (measured: an eighth to a sixth;
	// the client's pooled connections, the Events' history in the cache).
	eventually(t, "the streams' other goroutines to end", func(context.Context) (bool, error) {
		return runtime.NumGoroutine() <= goroutines+100, nil
	})
	readers = nil
	left := heapAndStacks() - before
	t.Logf("after the clients went away: %d KiB over the start, %d goroutines (%d before)", left>>10, runtime.NumGoroutine(), goroutines)
	if left > held/3 {
		t.Errorf("%d KiB left over the start once the streams ended, want at most %d KiB", left>>10, held/3>>10)
	}
}

// heapAndStacks is the live heap plus the goroutine stacks, after a
// collection. The live heap, not the heap's spans in use: freed objects
// leave spans partly used for a while.
func heapAndStacks() int64 {
	runtime.GC()
	runtime.GC() // what sync.Pools held until the first one is free too
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc + m.StackInuse)
}
