package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

// stalledResult is the outcome of the stalled scenario: watchers that
// start from resourceVersion=0 and never read, what they cost the server
// while writes go on, and whether it ends them.
type stalledResult struct {
	Watchers  int           `json:"watchers"`
	Transport string        `json:"transport"`
	Objects   int           `json:"objects"`
	Opened    int64         `json:"opened"`
	OpenError string        `json:"openError,omitempty"`
	Hold      time.Duration `json:"hold"`
	Writes    int64         `json:"writes"`

	RSSBeforeKiB int64 `json:"rssBeforeKiB"`
	RSSPeakKiB   int64 `json:"rssPeakKiB"`
	RSSAfterKiB  int64 `json:"rssAfterKiB"`
	// RSSPerWatcherKiB is (peak − before) / watchers.
	RSSPerWatcherKiB  float64 `json:"rssPerWatcherKiB"`
	HeapBefore        int64   `json:"heapBefore,omitempty"`
	HeapPeak          int64   `json:"heapPeak,omitempty"`
	HeapAfter         int64   `json:"heapAfter,omitempty"`
	GoroutinesBefore  int64   `json:"goroutinesBefore,omitempty"`
	GoroutinesAfter   int64   `json:"goroutinesAfter,omitempty"`
	HeapPerWatcherKiB float64 `json:"heapPerWatcherKiB,omitempty"`
	// Ended is how many of the stalled streams the server had ended by
	// the end of the hold.
	Ended int64 `json:"ended"`
}

// stalledReadBuffer is the receive buffer of a stalled watcher's socket:
// small, so that the server's writes stall after a few KiB, as they do for
// a client that stops reading a long-lived connection.
const stalledReadBuffer = 4 << 10

// runStalled ensures the objects exist, opens the watchers, holds them
// unread while a writer updates objects, and samples the server.
func runStalled(ctx context.Context, c *config, t *target, objs *objectFactory, s *sampler, logf logFunc) (*stalledResult, error) {
	res := &stalledResult{Watchers: c.StalledWatchers, Transport: c.StalledTransport, Objects: c.StalledObjects, Hold: c.StalledHold}
	logf("stalled: ensuring %d objects", c.StalledObjects)
	if _, err := createMissing(ctx, t, objs, "load-stalled", c.StalledObjects, c.ListCreators); err != nil {
		return nil, err
	}
	before := s.sample(ctx)
	logf("stalled: opening %d %s watchers from resourceVersion=0 that never read", c.StalledWatchers, c.StalledTransport)
	ws, err := openStalled(ctx, c, t)
	if ws != nil {
		defer ws.close()
		res.Opened = int64(len(ws.streams))
	}
	if err != nil {
		res.OpenError = err.Error()
		if ws == nil {
			return res, nil
		}
	}

	writeCtx, stopWriting := context.WithCancel(ctx)
	var writes atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() { stalledWriter(writeCtx, c, t, &writes) })
	peak := before
	tick := time.NewTicker(time.Second)
	hold := time.NewTimer(c.StalledHold)
	for done := false; !done; {
		select {
		case <-tick.C:
			if smp := s.sample(ctx); smp.RSSKiB > peak.RSSKiB || smp.HeapInuse > peak.HeapInuse {
				peak.RSSKiB, peak.HeapInuse = max(peak.RSSKiB, smp.RSSKiB), max(peak.HeapInuse, smp.HeapInuse)
			}
		case <-hold.C:
			done = true
		case <-ctx.Done():
			done = true
		}
	}
	tick.Stop()
	stopWriting()
	wg.Wait()
	res.Writes = writes.Load()
	after := s.sample(ctx)
	res.Ended = ws.ended(ctx)

	res.RSSBeforeKiB, res.RSSPeakKiB, res.RSSAfterKiB = before.RSSKiB, max(peak.RSSKiB, after.RSSKiB), after.RSSKiB
	if res.Opened > 0 {
		res.RSSPerWatcherKiB = float64(res.RSSPeakKiB-before.RSSKiB) / float64(res.Opened)
	}
	if before.MetricsErr == "" && after.MetricsErr == "" {
		res.HeapBefore, res.HeapPeak, res.HeapAfter = before.HeapInuse, max(peak.HeapInuse, after.HeapInuse), after.HeapInuse
		res.GoroutinesBefore, res.GoroutinesAfter = before.Goroutines, after.Goroutines
		if res.Opened > 0 {
			res.HeapPerWatcherKiB = float64(res.HeapPeak-before.HeapInuse) / 1024 / float64(res.Opened)
		}
	}
	logf("stalled: %d opened, %d writes; RSS %d -> peak %d KiB (%.1f KiB/watcher); %d ended by the server",
		res.Opened, res.Writes, res.RSSBeforeKiB, res.RSSPeakKiB, res.RSSPerWatcherKiB, res.Ended)
	return res, nil
}

// stalledWriter patches the stalled objects' payloads, round robin, at
// StalledWriteRate a second, so that the state a stalled watcher started
// from goes on changing under it.
func stalledWriter(ctx context.Context, c *config, t *target, writes *atomic.Int64) {
	if c.StalledWriteRate <= 0 {
		return
	}
	tick := time.NewTicker(time.Duration(float64(time.Second) / c.StalledWriteRate))
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		patch := fmt.Appendf(nil, `{"metadata":{"annotations":{"apiloom-load/stalled":"%d"}}}`, i)
		name := fmt.Sprintf("load-stalled-%06d", i%c.StalledObjects)
		if _, err := t.writer.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err == nil {
			writes.Add(1)
		}
	}
}

// createMissing creates the objects prefix-000000... that do not exist
// yet, with creators concurrent creates, and returns how many it created.
func createMissing(ctx context.Context, t *target, objs *objectFactory, prefix string, n, creators int) (int64, error) {
	return createMissingFrom(ctx, t, objs, prefix, 0, n, creators)
}

// createMissingFrom is createMissing over the objects from .. n-1 only.
func createMissingFrom(ctx context.Context, t *target, objs *objectFactory, prefix string, from, n, creators int) (int64, error) {
	return eachObjectFrom(ctx, prefix, from, n, creators, "create", func(name string) (bool, error) {
		_, err := t.writer.Create(ctx, objs.object(name, prefix), metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return false, nil
		}
		return err == nil, err
	})
}

// eachObject calls do for the objects prefix-000000 .. n-1, from workers
// goroutines, until all are done or ctx ends, and returns how many calls
// counted. The first error is returned, named by verb; the others go on.
func eachObject(ctx context.Context, prefix string, n, workers int, verb string, do func(name string) (counted bool, err error)) (int64, error) {
	return eachObjectFrom(ctx, prefix, 0, n, workers, verb, do)
}

// eachObjectFrom is eachObject over the objects from .. n-1 only: the
// scale scenario adds each step's objects without visiting the ones the
// steps before made.
func eachObjectFrom(ctx context.Context, prefix string, from, n, workers int, verb string, do func(name string) (counted bool, err error)) (int64, error) {
	var next, counted atomic.Int64
	next.Store(int64(from))
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(n) || ctx.Err() != nil {
					return
				}
				ok, err := do(fmt.Sprintf("%s-%06d", prefix, i))
				if err != nil {
					firstErr.CompareAndSwap(nil, err)
				}
				if ok {
					counted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if err, ok := firstErr.Load().(error); ok {
		return counted.Load(), fmt.Errorf("%s %s objects: %w", verb, prefix, err)
	}
	return counted.Load(), ctx.Err()
}

// stalledSet is the open stalled streams.
type stalledSet struct {
	streams []io.ReadCloser
	closers []func()
}

func (s *stalledSet) close() {
	for _, st := range s.streams {
		_ = st.Close()
	}
	for _, c := range s.closers {
		c()
	}
}

// ended reads every stream for a moment and counts those the server has
// ended (EOF or an error other than the read deadline): a live stream
// still delivers the initial events it could not send.
func (s *stalledSet) ended(ctx context.Context) int64 {
	var n atomic.Int64
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for _, st := range s.streams {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			stop := context.AfterFunc(rctx, func() { _ = st.Close() })
			defer stop()
			_, _ = io.Copy(io.Discard, st)
			if rctx.Err() == nil {
				n.Add(1)
			}
		})
	}
	wg.Wait()
	return n.Load()
}

// openStalled opens the watchers over c.StalledTransport.
func openStalled(ctx context.Context, c *config, t *target) (*stalledSet, error) {
	tlsCfg, err := rest.TLSConfigFor(t.cfg)
	if err != nil {
		return nil, err
	}
	if tlsCfg == nil {
		tlsCfg = &tls.Config{}
	}
	u, err := url.Parse(t.collection + "?watch=true&resourceVersion=0&timeoutSeconds=3600")
	if err != nil {
		return nil, err
	}
	if tlsCfg.ServerName == "" {
		tlsCfg.ServerName = u.Hostname()
	}
	dialer := &net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, stalledReadBuffer)
		})
		return errors.Join(err, serr)
	}}
	set := &stalledSet{}
	var mu sync.Mutex
	var firstErr error
	add := func(rc io.ReadCloser, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			return
		}
		set.streams = append(set.streams, rc)
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, c.OpenConcurrency)
	switch c.StalledTransport {
	case "http1":
		cfg := tlsCfg.Clone()
		cfg.NextProtos = []string{"http/1.1"}
		for range c.StalledWatchers {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				add(openHTTP1Watch(ctx, dialer, cfg, u, t.cfg.BearerToken))
			})
		}
	case "h2":
		// A transport per group of streams, with small receive windows:
		// Go's defaults (4 MiB a stream) would let the client, not the
		// server, hold what a stalled watcher has not read.
		for g := 0; g*c.StreamsPerConn < c.StalledWatchers; g++ {
			tr := &http.Transport{
				TLSClientConfig: tlsCfg.Clone(), DialContext: dialer.DialContext, ForceAttemptHTTP2: true,
				HTTP2: &http.HTTP2Config{MaxReceiveBufferPerStream: 64 << 10, MaxReceiveBufferPerConnection: 1 << 20},
			}
			tr.Protocols = new(http.Protocols)
			tr.Protocols.SetHTTP2(true)
			client := &http.Client{Transport: tr}
			set.closers = append(set.closers, tr.CloseIdleConnections)
			for i := g * c.StreamsPerConn; i < min((g+1)*c.StreamsPerConn, c.StalledWatchers); i++ {
				sem <- struct{}{}
				wg.Go(func() {
					defer func() { <-sem }()
					add(openH2Watch(ctx, client, u, t.cfg.BearerToken))
				})
			}
		}
	default:
		return nil, fmt.Errorf("%w: --stalled-transport %q (http1 or h2)", errConfig, c.StalledTransport)
	}
	wg.Wait()
	return set, firstErr
}

// openHTTP1Watch sends the watch request on a connection of its own and
// reads only the status line.
func openHTTP1Watch(ctx context.Context, d *net.Dialer, cfg *tls.Config, u *url.URL, token string) (io.ReadCloser, error) {
	raw, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil, err
	}
	conn := tls.Client(raw, cfg)
	auth := ""
	if token != "" {
		auth = "Authorization: Bearer " + token + "\r\n"
	}
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\n%sAccept: application/json\r\n\r\n", u.RequestURI(), u.Host, auth); err != nil {
		_ = conn.Close()
		return nil, err
	}
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	line, err := bufio.NewReaderSize(conn, 16).ReadString('\n')
	_ = conn.SetReadDeadline(time.Time{})
	if err != nil || len(line) < 12 || line[9:12] != "200" {
		_ = conn.Close()
		return nil, fmt.Errorf("watch over HTTP/1.1: %q %v", line, err)
	}
	return conn, nil
}

// openH2Watch starts the watch and keeps its body unread.
func openH2Watch(ctx context.Context, client *http.Client, u *url.URL, token string) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		_ = resp.Body.Close()
		return nil, fmt.Errorf("watch over HTTP/2: HTTP %d", resp.StatusCode)
	}
	return resp.Body, nil
}
