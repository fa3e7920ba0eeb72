package hook_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/apiloom/apiloom/server/hook"
)

// TestCallDeadline: a positive timeout is the call's deadline; none
// (0) leaves the request's context without one, as a stream needs; a
// panic is ErrPanic either way.
func TestCallDeadline(t *testing.T) {
	req := hook.NewRequest(context.Background(), hook.Read, "", false, nil, "", "", nil)
	for _, timeout := range []time.Duration{0, time.Hour} {
		var has bool
		if err := hook.Call(req, timeout, func(r *hook.Request) { _, has = r.Context().Deadline() }); err != nil {
			t.Fatal(err)
		}
		if has != (timeout > 0) {
			t.Errorf("timeout %v: deadline %v", timeout, has)
		}
		if err := hook.Call(req, timeout, func(*hook.Request) { panic("boom") }); !errors.Is(err, hook.ErrPanic) {
			t.Errorf("timeout %v: panic gave %v", timeout, err)
		}
	}
}
