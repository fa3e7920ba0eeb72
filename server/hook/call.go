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
// bounded by timeout (none when it is not positive: a stream lasts as long
// as its client). A panic in fn is an error wrapping ErrPanic (with the
// stack); fn returning after the deadline is one wrapping ErrTimeout: the
// request fails, the server goes on.
//
// fn runs on the request's goroutine: handing it to another costs a
// cross-thread wake-up per call (tens of microseconds, a tenth of a
// create's handler time; BenchmarkHooks), every write paying for hooks
// that misbehave. The deadline is therefore the context's: a hook that
// waits on anything must watch req.Context(); one that ignores it holds
// its own request, and only that one, until it returns.
func Call(req *Request, timeout time.Duration, fn func(req *Request)) (err error) {
	ctx, cancel := context.WithCancel(req.ctx)
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(req.ctx, timeout)
	}
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v\n%s", ErrPanic, p, debug.Stack())
			return
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("%w: %v", ErrTimeout, timeout)
		}
	}()
	fn(req.withContext(ctx))
	return nil
}
