package hostcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stopGrace is how long a process has to exit after SIGTERM before it is
// killed; kube-apiserver drains its requests first.
const stopGrace = 10 * time.Second

// process is a child process the harness owns: started with Start, its
// output in a log file in the cluster's Dir, stopped at t's cleanup.
type process struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	done    chan struct{} // closed when the process has exited
	err     error         // Wait's result, set before done is closed
}

// startProcess starts bin with args, logging to dir/name.log. At t's
// cleanup the process gets SIGTERM, then SIGKILL after stopGrace, and its
// log's tail (before it was stopped) is logged if t failed.
func startProcess(t testing.TB, dir, name, bin string, args ...string) *process {
	t.Helper()
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = stopGrace
	cmd.SysProcAttr = dieWithParent()
	if err := cmd.Start(); err != nil {
		cancel()
		_ = logFile.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	p := &process{name: name, logPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		_ = logFile.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		// The tail as the test left it, before shutdown's own lines bury it.
		failed := t.Failed()
		var tail string
		if failed {
			tail = p.tail()
		}
		cancel()
		<-p.done
		if failed {
			t.Logf("%s log (%s), last %d lines before it was stopped:\n%s", name, logPath, logTailLines, tail)
		}
	})
	return p
}

// exited reports the process's end as an error if it has ended, else nil.
func (p *process) exited() error {
	select {
	case <-p.done:
		err := p.err
		if err == nil {
			err = errors.New("exit status 0")
		}
		return fmt.Errorf("%s exited: %v", p.name, err)
	default:
		return nil
	}
}

// logTailLines is how much of a log a failed test shows.
const logTailLines = 100

// tail is the last logTailLines lines of the process's log.
func (p *process) tail() string {
	data, err := os.ReadFile(p.logPath)
	if err != nil {
		return err.Error()
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > logTailLines {
		lines = lines[len(lines)-logTailLines:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// logContains reports whether the process's log holds s.
func (p *process) logContains(s string) bool {
	data, err := os.ReadFile(p.logPath)
	return err == nil && strings.Contains(string(data), s)
}
