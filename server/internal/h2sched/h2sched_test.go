package h2sched

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"golang.org/x/net/http2"
)

func TestControlFramesAreRecognised(t *testing.T) {
	if !Supported() {
		t.Fatal("x/net's FrameWriteRequest no longer has its stream field; the server falls back to x/net's O(streams) scheduler")
	}
	if !isControl(&http2.FrameWriteRequest{}) {
		t.Fatal("a frame without a stream is not seen as a control frame")
	}
}

// newServer starts an HTTP/2 TLS server using the scheduler. Each request
// streams the body "<stream>:<i>\n" for i < n, flushing after every line.
func newServer(t *testing.T) *httptest.Server {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		pad := bytes.Repeat([]byte("x"), 1000)
		rc := http.NewResponseController(w)
		for i := range n {
			if _, err := fmt.Fprintf(w, "%s:%d:%s\n", r.URL.Query().Get("id"), i, pad); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
		}
	}))
	if err := http2.ConfigureServer(srv.Config, &http2.Server{NewWriteScheduler: New, MaxConcurrentStreams: 1000}); err != nil {
		t.Fatal(err)
	}
	srv.TLS = srv.Config.TLSConfig
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

func client(srv *httptest.Server) *http.Client {
	return &http.Client{Transport: &http2.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}}}}
}

func expected(id string, n int) []byte {
	var b bytes.Buffer
	pad := bytes.Repeat([]byte("x"), 1000)
	for i := range n {
		fmt.Fprintf(&b, "%s:%d:%s\n", id, i, pad)
	}
	return b.Bytes()
}

func get(t *testing.T, c *http.Client, srv *httptest.Server, id string, n int) *http.Response {
	t.Helper()
	resp, err := c.Get(srv.URL + "/?id=" + id + "&n=" + strconv.Itoa(n))
	if err != nil {
		t.Fatal(err)
	}
	if resp.ProtoMajor != 2 {
		t.Fatalf("got %s, want HTTP/2", resp.Proto)
	}
	return resp
}

// TestManyStreamsOnOneConnection checks every stream of a busy connection
// gets all its bytes, in order.
func TestManyStreamsOnOneConnection(t *testing.T) {
	srv := newServer(t)
	c := client(srv)
	const streams, lines = 300, 40
	var wg sync.WaitGroup
	errs := make(chan error, streams)
	for s := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := strconv.Itoa(s)
			resp, err := c.Get(srv.URL + "/?id=" + id + "&n=" + strconv.Itoa(lines))
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				errs <- err
				return
			}
			if !bytes.Equal(body, expected(id, lines)) {
				errs <- fmt.Errorf("stream %s: got %d bytes, want %d, in order", id, len(body), len(expected(id, lines)))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestBlockedStreamDoesNotHoldOthers leaves one stream unread until its
// flow-control window is exhausted; the other streams on the connection
// must still complete, and the blocked one afterwards.
func TestBlockedStreamDoesNotHoldOthers(t *testing.T) {
	srv := newServer(t)
	c := client(srv)
	// More than the client's 4 MiB stream window, so the server blocks.
	const blockedLines = 6000
	blocked := get(t, c, srv, "blocked", blockedLines)
	defer blocked.Body.Close()

	for i := range 20 {
		id := "other" + strconv.Itoa(i)
		resp := get(t, c, srv, id, 50)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || !bytes.Equal(body, expected(id, 50)) {
			t.Fatalf("stream %s beside a blocked one: %d bytes, %v", id, len(body), err)
		}
	}
	body, err := io.ReadAll(blocked.Body)
	if err != nil || !bytes.Equal(body, expected("blocked", blockedLines)) {
		t.Fatalf("blocked stream: %d bytes, %v", len(body), err)
	}
}
