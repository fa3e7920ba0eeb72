package e2e

import (
	"bufio"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestCleanShutdownLogsNothingAlarming (issue 32): bin/apiloom stopped by
// SIGINT or SIGTERM once its controllers run exits 0 and logs no error
// (slog's level=ERROR, klog's E lines) and, from "shutting down" on, no
// warning either. Its controllers reach it through its own listener and
// its leader election releases their Lease through it, so they must stop
// before the listener closes; when they did not, every stop logged
// client-go's "error retrieving resource lock ... connection refused".
func TestCleanShutdownLogsNothingAlarming(t *testing.T) {
	bin := apiloomBinary(t)
	for _, tc := range []struct {
		name   string
		signal os.Signal
		args   []string
	}{
		{"SIGINT", os.Interrupt, nil},
		{"SIGTERM", syscall.SIGTERM, nil},
		{"SIGTERM without leader election", syscall.SIGTERM, []string{"--leader-elect=false"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--data-dir", t.TempDir(), "--secure-port", "0", "--http2-server", http2Server(t)}, tc.args...)
			srv := startLogged(t, bin, args, "gc: graph built")
			srv.waitMarker(t, "gc: graph built", 90*time.Second)
			if err := srv.cmd.Process.Signal(tc.signal); err != nil {
				t.Fatal(err)
			}
			logs := srv.wait(t, 60*time.Second)
			if code := srv.cmd.ProcessState.ExitCode(); code != 0 {
				t.Fatalf("apiloom exited with code %d after %v; logs:\n%s", code, tc.signal, strings.Join(logs, "\n"))
			}
			stopping := false
			for _, line := range logs {
				stopping = stopping || strings.Contains(line, `msg="shutting down"`)
				if isErrorLine(line) || stopping && isWarningLine(line) {
					t.Errorf("alarming log line (stopping=%v): %s", stopping, line)
				}
			}
			if !stopping {
				t.Errorf("no \"shutting down\" line; logs:\n%s", strings.Join(logs, "\n"))
			}
		})
	}
}

var (
	// klogSeverity is the first field of a klog line (client-go logs
	// through klog): I, W, E or F, then the date (mmdd).
	klogSeverity = regexp.MustCompile(`^([IWEF])\d{4} `)
)

func isErrorLine(line string) bool {
	if m := klogSeverity.FindStringSubmatch(line); m != nil {
		return m[1] == "E" || m[1] == "F"
	}
	return strings.Contains(line, "level=ERROR")
}

func isWarningLine(line string) bool {
	if m := klogSeverity.FindStringSubmatch(line); m != nil {
		return m[1] == "W"
	}
	return strings.Contains(line, "level=WARN")
}

// loggedServer is bin/apiloom with its stdout and stderr read line by line.
type loggedServer struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed once the process has exited and its output is read

	mu      sync.Mutex
	lines   []string
	markers map[string]chan struct{} // closed at the first line containing the key
}

// startLogged starts bin with args; waitMarker then waits for a line
// containing one of markers.
func startLogged(t *testing.T, bin string, args []string, markers ...string) *loggedServer {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &loggedServer{cmd: exec.Command(bin, args...), exited: make(chan struct{}), markers: map[string]chan struct{}{}}
	for _, m := range markers {
		s.markers[m] = make(chan struct{})
	}
	s.cmd.Stdout, s.cmd.Stderr = pw, pw
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = pw.Close() // the child holds the only write end: EOF once it exits
	go func() {
		defer close(s.exited)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			s.add(sc.Text())
		}
		_ = pr.Close()
		_ = s.cmd.Wait()
	}()
	t.Cleanup(func() {
		select {
		case <-s.exited:
		default: // the test failed before stopping it
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	})
	return s
}

func (s *loggedServer) add(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lines = append(s.lines, line)
	for m, c := range s.markers {
		if strings.Contains(line, m) {
			close(c)
			delete(s.markers, m)
		}
	}
}

func (s *loggedServer) logs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.lines...)
}

// waitMarker waits up to d for a line containing marker, failing t if
// the server exits first.
func (s *loggedServer) waitMarker(t *testing.T, marker string, d time.Duration) {
	t.Helper()
	s.mu.Lock()
	c, ok := s.markers[marker]
	s.mu.Unlock()
	if !ok {
		return // seen already
	}
	select {
	case <-c:
	case <-s.exited:
		t.Fatalf("apiloom exited before logging %q; logs:\n%s", marker, strings.Join(s.logs(), "\n"))
	case <-time.After(d):
		t.Fatalf("apiloom logged no %q within %v; logs:\n%s", marker, d, strings.Join(s.logs(), "\n"))
	}
}

// wait waits up to d for the server to exit and returns every line it
// logged.
func (s *loggedServer) wait(t *testing.T, d time.Duration) []string {
	t.Helper()
	select {
	case <-s.exited:
	case <-time.After(d):
		t.Fatalf("apiloom did not exit within %v; logs:\n%s", d, strings.Join(s.logs(), "\n"))
	}
	return s.logs()
}
