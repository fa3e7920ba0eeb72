package cluster

import (
	"context"
	"fmt"
	"time"
)

// pollInterval is how often a wait re-checks its condition.
const pollInterval = 100 * time.Millisecond

// Until re-checks cond every pollInterval until it reports true, returns
// an error, or ctx ends; then it returns the last condition error with
// ctx's, so a timeout says what was still wrong.
func Until(ctx context.Context, what string, cond func(context.Context) (bool, error)) error {
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	var last error
	for {
		ok, err := cond(ctx)
		if ok && err == nil {
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster: waiting for %s: %w (last: %v)", what, ctx.Err(), last)
		case <-t.C:
		}
	}
}
