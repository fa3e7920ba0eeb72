package cluster

import (
	"context"
	"os"
)

// RestartWith stops the replica (SIGTERM) and starts it again on its data
// with the executable bin and env added to its environment (NAME=value),
// then waits until it is ready. The planted-bug tests use it to run one
// replica as a failpoints build with one failpoint armed; later restarts
// keep bin and env.
func (r *Replica) RestartWith(ctx context.Context, bin string, env ...string) error {
	if err := r.Terminate(ctx); err != nil {
		return err
	}
	r.mu.Lock()
	r.bin, r.env = bin, env
	r.mu.Unlock()
	if err := r.Start(); err != nil {
		return err
	}
	return r.WaitReady(ctx)
}

// Log returns what the process has written so far, across incarnations.
func (p *Process) Log() (string, error) {
	b, err := os.ReadFile(p.logPath)
	return string(b), err
}
