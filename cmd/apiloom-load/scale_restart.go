package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// scaleRestartTimes is the scale scenario's restart: the server stopped
// and started again on the same data by the --scale-stop and
// --scale-start commands (the script that owns the processes knows how),
// then polled until it serves every object again.
type scaleRestartTimes struct {
	// StopTime is how long the stop command took (until the processes
	// exited).
	StopTime time.Duration `json:"stopTime"`
	// ReadyzTime and ReadyTime run from the start command's start: until
	// /readyz answered 200, and until a LIST with resourceVersion=0 also
	// returned at least the step's objects (Items is how many it did).
	ReadyzTime time.Duration `json:"readyzTime"`
	ReadyTime  time.Duration `json:"readyTime"`
	Items      int           `json:"items"`
	// PIDs are the server's processes after the restart.
	PIDs []int `json:"pids,omitempty"`
	// Memory is read once ready: the same objects held by a fresh
	// process, without the garbage of the step's LISTs and syncs.
	Memory scaleMemory `json:"memory"`
	Error  string      `json:"error,omitempty"`
}

// restartReadyTimeout bounds the wait for a restarted server: a million
// objects take minutes to load into a watch cache.
const restartReadyTimeout = 30 * time.Minute

// hookWaitDelay bounds the wait for a hook's output once it has exited:
// a server it started in the background must not hold its stdout.
const hookWaitDelay = 10 * time.Second

// restartServer stops and starts the server with the configured commands,
// points c at the new processes (--pid) and returns a target and sampler
// for the server as it now is (the start may move it to another port;
// the kubeconfig at c.Kubeconfig says where).
func restartServer(ctx context.Context, c *config, objects int, logf logFunc) (*scaleRestartTimes, *target, *sampler, error) {
	rs := &scaleRestartTimes{}
	fail := func(err error) (*scaleRestartTimes, *target, *sampler, error) {
		rs.Error = err.Error()
		return rs, nil, nil, err
	}
	logf("scale %d: stopping the server", objects)
	start := time.Now()
	if _, err := runHook(ctx, c.ScaleStop); err != nil {
		return fail(fmt.Errorf("stop: %w", err))
	}
	rs.StopTime = time.Since(start)
	logf("scale %d: stopped in %v; starting it again", objects, rs.StopTime.Round(time.Millisecond))
	start = time.Now()
	out, err := runHook(ctx, c.ScaleStart)
	if err != nil {
		return fail(fmt.Errorf("start: %w", err))
	}
	pids, err := parseStartPIDs(out, len(c.PIDs))
	if err != nil {
		return fail(fmt.Errorf("start: %w", err))
	}
	c.PIDs, rs.PIDs = pids, pids
	t, err := newTarget(c)
	if err != nil {
		return fail(err)
	}
	s := newSampler(t, c.processes())
	rs.ReadyzTime, rs.ReadyTime, rs.Items, err = awaitServing(ctx, t, start, objects, c.ListCompression, restartReadyTimeout)
	if err != nil {
		return fail(err)
	}
	rs.Memory = memoryOf(s.sample(ctx))
	logf("scale %d: restarted: /readyz after %v, %d items from LIST RV=0 after %v", objects,
		rs.ReadyzTime.Round(time.Millisecond), rs.Items, rs.ReadyTime.Round(time.Millisecond))
	return rs, t, s, nil
}

// runHook runs cmd with bash and returns its standard output; its
// standard error goes to ours.
func runHook(ctx context.Context, cmd string) ([]byte, error) {
	h := exec.CommandContext(ctx, "bash", "-c", cmd)
	h.Stderr = os.Stderr
	h.WaitDelay = hookWaitDelay
	out, err := h.Output()
	if err != nil {
		return out, fmt.Errorf("%q: %w", cmd, err)
	}
	return out, nil
}

var errStartOutput = errors.New("the start command's last line must be the new server PIDs")

// parseStartPIDs reads the PIDs from the last non-empty line of the start
// command's output: want of them, each a positive number.
func parseStartPIDs(out []byte, want int) ([]int, error) {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	fields := strings.Fields(lines[len(lines)-1])
	if len(fields) != want {
		return nil, fmt.Errorf("%w (%d of them): got %q", errStartOutput, want, lines[len(lines)-1])
	}
	pids := make([]int, len(fields))
	for i, f := range fields {
		p, err := strconv.Atoi(f)
		if err != nil || p <= 0 {
			return nil, fmt.Errorf("%w: %q is no PID", errStartOutput, f)
		}
		pids[i] = p
	}
	return pids, nil
}

// readyPoll is how often a restarting server is asked again.
const readyPoll = 20 * time.Millisecond

// awaitServing polls the server until /readyz answers 200, then until a
// LIST with resourceVersion=0 returns at least objects items, and
// returns the times of both from start; connection errors and other
// answers are retried until timeout.
func awaitServing(ctx context.Context, t *target, start time.Time, objects int, gzip bool, timeout time.Duration) (readyz, ready time.Duration, items int, err error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(readyPoll)
	defer tick.Stop()
	wait := func() error {
		select {
		case <-tick.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	readyzURL := strings.TrimSuffix(t.cfg.Host, "/") + "/readyz"
	last := "no answer yet"
	for {
		code, err := getStatus(ctx, t.plain, readyzURL)
		if err == nil && code == http.StatusOK {
			break
		}
		if ctx.Err() == nil { // else the deadline's error hides what the server said
			last = fmt.Sprintf("HTTP %d", code)
			if err != nil {
				last = err.Error()
			}
		}
		if err := wait(); err != nil {
			return 0, 0, 0, fmt.Errorf("/readyz not 200 within %v (last: %s): %w", timeout, last, err)
		}
	}
	readyz = time.Since(start)
	var into bytes.Buffer
	for {
		_, body, _, err := timeList(ctx, t, true, gzip, &into)
		if err == nil {
			items, err = countItems(body)
			if err == nil && items >= objects {
				return readyz, time.Since(start), items, nil
			}
		}
		if ctx.Err() == nil {
			last = fmt.Sprintf("%d items", items)
			if err != nil {
				last = err.Error()
			}
		}
		if err := wait(); err != nil {
			return readyz, 0, items, fmt.Errorf("LIST RV=0 short of %d objects within %v (last: %s): %w", objects, timeout, last, err)
		}
	}
}

// getStatus GETs u and returns the status code, the body discarded.
func getStatus(ctx context.Context, hc *http.Client, u string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

// countItems is the number of items of a JSON list.
func countItems(body []byte) (int, error) {
	var l struct {
		Items []struct{} `json:"items"`
	}
	if err := jsonAPI.Unmarshal(body, &l); err != nil {
		return 0, fmt.Errorf("decode list: %w", err)
	}
	return len(l.Items), nil
}
