package controllers

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// seenCall is what a lock saw of one call's context, during the call.
type seenCall struct {
	err         error
	deadline    time.Time
	hasDeadline bool
}

// ctxLock records, for each call, its context's state during the call.
type ctxLock struct {
	resourcelock.Interface
	calls []seenCall
}

func (l *ctxLock) see(ctx context.Context) {
	d, ok := ctx.Deadline()
	l.calls = append(l.calls, seenCall{err: ctx.Err(), deadline: d, hasDeadline: ok})
}

func (l *ctxLock) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	l.see(ctx)
	return &resourcelock.LeaderElectionRecord{}, nil, nil
}

func (l *ctxLock) Create(ctx context.Context, _ resourcelock.LeaderElectionRecord) error {
	l.see(ctx)
	return nil
}

func (l *ctxLock) Update(ctx context.Context, _ resourcelock.LeaderElectionRecord) error {
	l.see(ctx)
	return nil
}

// TestFinishingLock: a Lease request made as the elector's context ends
// is not cancelled with it; it keeps the elector's deadline, or gets the
// lock's timeout when the elector set none.
func TestFinishingLock(t *testing.T) {
	inner := &ctxLock{}
	l := &finishingLock{Interface: inner, timeout: time.Hour}

	ended, cancel := context.WithCancel(t.Context())
	cancel()
	deadline := time.Now().Add(time.Minute)
	withDeadline, cancelDeadline := context.WithDeadline(ended, deadline)
	defer cancelDeadline()

	start := time.Now()
	_, _, _ = l.Get(withDeadline)
	_ = l.Create(withDeadline, resourcelock.LeaderElectionRecord{})
	_ = l.Update(ended, resourcelock.LeaderElectionRecord{})
	if len(inner.calls) != 3 {
		t.Fatalf("%d calls reached the lock, want 3", len(inner.calls))
	}
	for i, c := range inner.calls {
		if c.err != nil {
			t.Errorf("call %d: its context had ended (%v), want it to run", i, c.err)
		}
		if !c.hasDeadline {
			t.Errorf("call %d: no deadline", i)
			continue
		}
		want := deadline
		if i == 2 { // the elector set no deadline: the lock's timeout
			want = start.Add(time.Hour)
			if c.deadline.Before(want) || c.deadline.After(time.Now().Add(time.Hour)) {
				t.Errorf("call %d: deadline %v, want the lock's timeout from the call (%v)", i, c.deadline, want)
			}
			continue
		}
		if !c.deadline.Equal(want) {
			t.Errorf("call %d: deadline %v, want the elector's %v", i, c.deadline, want)
		}
	}
}
