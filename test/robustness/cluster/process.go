package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
)

// ErrNotRunning is returned by the signals of a Process that has no live
// process (never started, or killed and not restarted).
var ErrNotRunning = errors.New("cluster: process not running")

// Process is one child process of the suite (an etcd member or an apiloom
// replica) that can be killed with SIGKILL, paused with SIGSTOP, resumed
// and started again with the same arguments, so on the same data. Its
// output is appended to one log file across restarts, so a failing
// scenario shows every incarnation's output.
type Process struct {
	Name    string
	bin     string
	args    []string
	logPath string
	// env is added to the suite's environment for the next start;
	// guarded by mu, which Start holds while it reads bin and env and
	// RestartWith while it changes them.
	env []string

	// mu guards cmd and exited: the current incarnation.
	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed by the incarnation's wait goroutine
}

func newProcess(name, bin, logPath string, args ...string) *Process {
	return &Process{Name: name, bin: bin, args: args, logPath: logPath}
}

// Start starts a new incarnation. It fails when one is running.
func (p *Process) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exited != nil {
		select {
		case <-p.exited:
		default:
			return fmt.Errorf("cluster: %s already running", p.Name)
		}
	}
	log, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "==== %s start %q\n", p.Name, p.args)
	cmd := exec.Command(p.bin, p.args...)
	if len(p.env) > 0 {
		cmd.Env = append(os.Environ(), p.env...)
	}
	cmd.Stdout, cmd.Stderr = log, log
	// The child dies with the test binary even when the test panics and
	// never reaches its cleanup.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("cluster: start %s: %w", p.Name, err)
	}
	exited := make(chan struct{})
	// Owned by this incarnation: it ends when the process does, which
	// Kill and Terminate wait for.
	go func() {
		cmd.Wait()
		log.Close()
		close(exited)
	}()
	p.cmd, p.exited = cmd, exited
	return nil
}

// current returns the live incarnation, or ErrNotRunning.
func (p *Process) current() (*exec.Cmd, chan struct{}, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return nil, nil, ErrNotRunning
	}
	select {
	case <-p.exited:
		return nil, nil, ErrNotRunning
	default:
		return p.cmd, p.exited, nil
	}
}

// Running reports whether an incarnation is alive (paused counts).
func (p *Process) Running() bool {
	_, _, err := p.current()
	return err == nil
}

// Pid is the live incarnation's process id, 0 when none.
func (p *Process) Pid() int {
	cmd, _, err := p.current()
	if err != nil {
		return 0
	}
	return cmd.Process.Pid
}

// Kill sends SIGKILL (kill -9) and waits until the process is gone.
func (p *Process) Kill(ctx context.Context) error {
	return p.signalAndWait(ctx, syscall.SIGKILL)
}

// Terminate sends SIGTERM and waits; after ctx ends it sends SIGKILL and
// waits for that. A process not running is no error.
func (p *Process) Terminate(ctx context.Context) error {
	cmd, exited, err := p.current()
	if errors.Is(err, ErrNotRunning) {
		return nil
	}
	cmd.Process.Signal(syscall.SIGCONT) // a paused process cannot act on SIGTERM
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
		return nil
	case <-ctx.Done():
	}
	cmd.Process.Signal(syscall.SIGKILL)
	<-exited // SIGKILL cannot be ignored: the wait is bounded
	return nil
}

func (p *Process) signalAndWait(ctx context.Context, sig syscall.Signal) error {
	cmd, exited, err := p.current()
	if err != nil {
		return err
	}
	if err := cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("cluster: %v %s: %w", sig, p.Name, err)
	}
	select {
	case <-exited:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("cluster: %s still running after %v: %w", p.Name, sig, ctx.Err())
	}
}

// Pause sends SIGSTOP: the process keeps its sockets open but answers
// nothing, as a hung or swapped-out server does.
func (p *Process) Pause() error { return p.signal(syscall.SIGSTOP) }

// Resume sends SIGCONT to a paused process.
func (p *Process) Resume() error { return p.signal(syscall.SIGCONT) }

func (p *Process) signal(sig syscall.Signal) error {
	cmd, _, err := p.current()
	if err != nil {
		return err
	}
	return cmd.Process.Signal(sig)
}
