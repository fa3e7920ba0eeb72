package hook

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"
)

// DefaultTimeout is how long a request's hooks may run at one point of
// the pipeline, as long as an admission webhook's default timeout.
const DefaultTimeout = 10 * time.Second

// ErrPanic and ErrTimeout are why Call failed.
var (
	ErrPanic   = errors.New("hook: panicked")
	ErrTimeout = errors.New("hook: did not return in time")
)

// Call runs fn, the calls of one point of the pipeline, with req's context
// bounded by timeout. A panic in fn is an error wrapping ErrPanic (with
// the stack), fn still running at the deadline one wrapping ErrTimeout:
// the request fails, the server goes on. fn runs on its own goroutine so
// the request need not wait for a hook that never returns; such a hook
// keeps its goroutine until it does (its context is cancelled).
func Call(req *Request, timeout time.Duration, fn func(req *Request)) error {
	ctx, cancel := context.WithTimeout(req.ctx, timeout)
	defer cancel()
	r := req.withContext(ctx)
	done := make(chan error, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Errorf("%w: %v\n%s", ErrPanic, p, debug.Stack())
			}
		}()
		fn(r)
		done <- nil
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("%w: %v", ErrTimeout, timeout)
		}
		return ctx.Err()
	}
}
