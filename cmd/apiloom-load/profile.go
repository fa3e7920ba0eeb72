package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// profileServer is the --profile value that means the target's own
// /debug/pprof/profile (kube-apiserver serves it with --profiling, the
// default), reached with the kubeconfig's credentials.
const profileServer = "server"

// cpuProfiler fetches one Go CPU profile of the server while the fanout
// writer runs, so that the profile shows the fan-out and nothing else.
type cpuProfiler struct {
	url    string // the pprof profile endpoint, without query
	client *http.Client
	out    string
}

// newCPUProfiler returns a profiler writing to out, or nil when no
// profile was asked for. A URL other than "server" must be a loopback
// address; it is fetched without the kubeconfig's credentials.
func newCPUProfiler(c *config, t *target, out string) (*cpuProfiler, error) {
	switch c.Profile {
	case "":
		return nil, nil
	case profileServer:
		return &cpuProfiler{url: strings.TrimSuffix(t.cfg.Host, "/") + "/debug/pprof/profile", client: t.plain, out: out}, nil
	}
	if err := checkLoopbackURL(c.Profile); err != nil {
		return nil, err
	}
	tr := &http.Transport{DialContext: loopbackDial}
	return &cpuProfiler{url: c.Profile, client: &http.Client{Transport: tr}, out: out}, nil
}

// start begins a profile of d and returns a function that waits for it
// and reports how it went. The profile is written to p.out.
func (p *cpuProfiler) start(ctx context.Context, d time.Duration) (wait func() error) {
	done := make(chan error, 1)
	go func() { done <- p.fetch(ctx, d) }()
	return func() error { return <-done }
}

func (p *cpuProfiler) fetch(ctx context.Context, d time.Duration) error {
	secs := max(1, int(d.Round(time.Second)/time.Second))
	ctx, cancel := context.WithTimeout(ctx, d+time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url+"?seconds="+url.QueryEscape(strconv.Itoa(secs)), nil)
	if err != nil {
		return err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return fmt.Errorf("cpu profile: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("cpu profile: HTTP %d: %s", resp.StatusCode, b)
	}
	f, err := os.Create(p.out)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return fmt.Errorf("cpu profile: %w", err)
	}
	return f.Close()
}
