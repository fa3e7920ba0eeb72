package h2_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apiloom/apiloom/server/detach"
	"github.com/apiloom/apiloom/server/internal/h2"
)

// TestMixedLoad runs every kind of stream at once over few connections:
// small GETs, uploads echoed back, flushed streams, detached bodies fed
// from other goroutines, and clients that give up halfway. Every response
// that completes must be exact, and once the clients are gone every
// handler must have returned and every source been closed.
func TestMixedLoad(t *testing.T) {
	var running, opened, closed atomic.Int64
	ts, c, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		running.Add(1)
		defer running.Add(-1)
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		switch r.URL.Path {
		case "/small":
			_, _ = io.WriteString(w, "ok")
		case "/echo":
			_, _ = io.Copy(w, r.Body)
		case "/flush":
			for i := range n {
				fmt.Fprintf(w, "%d,", i)
				w.(http.Flusher).Flush()
			}
		case "/detach":
			src := newTestSource()
			opened.Add(1)
			go func() {
				<-src.closed
				closed.Add(1)
			}()
			w.(detach.Detacher).DetachBody(src)
			go func() {
				<-src.started
				for i := range n {
					src.push([]byte(fmt.Sprintf("%d,", i)), i == n-1)
				}
			}()
		}
	}), func(s *h2.Server, tr *http.Transport) {
		s.MaxConcurrentStreams = 50
		tr.HTTP2 = &http.HTTP2Config{MaxReceiveBufferPerStream: 64 << 10, MaxReceiveBufferPerConnection: 64 << 10}
	})

	want := func(n int) string {
		var b bytes.Buffer
		for i := range n {
			fmt.Fprintf(&b, "%d,", i)
		}
		return b.String()
	}
	var wg sync.WaitGroup
	for worker := range 8 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(worker), 1))
			for range 40 {
				n := 1 + rng.IntN(3000)
				ctx, cancel := context.WithCancel(context.Background())
				var req *http.Request
				var expect string
				switch rng.IntN(4) {
				case 0:
					req, _ = http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/small", nil)
					expect = "ok"
				case 1:
					body := bytes.Repeat([]byte{byte('a' + worker)}, n*37)
					req, _ = http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/echo", bytes.NewReader(body))
					expect = string(body)
				case 2:
					req, _ = http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/flush?n="+strconv.Itoa(n), nil)
					expect = want(n)
				default:
					req, _ = http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/detach?n="+strconv.Itoa(n), nil)
					expect = want(n)
				}
				giveUp := rng.IntN(5) == 0
				resp, err := c.Do(req)
				if err != nil {
					cancel()
					t.Errorf("%s: %v", req.URL.Path, err)
					return
				}
				if giveUp {
					_, _ = io.ReadFull(resp.Body, make([]byte, 1+rng.IntN(len(expect))))
					cancel() // resets the stream halfway
					resp.Body.Close()
					continue
				}
				got, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				cancel()
				if err != nil || string(got) != expect {
					t.Errorf("%s: %d bytes (err %v), want %d bytes", req.URL.Path, len(got), err, len(expect))
					return
				}
			}
		})
	}
	wg.Wait()

	// Closing the connections ends whatever was still open.
	c.CloseIdleConnections()
	ts.CloseClientConnections()
	deadline := time.Now().Add(10 * time.Second)
	for running.Load() != 0 || closed.Load() != opened.Load() {
		if time.Now().After(deadline) {
			t.Fatalf("after the clients left: %d handlers running, %d of %d sources closed", running.Load(), closed.Load(), opened.Load())
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, with a deadline
	}
}
