package watch

import (
	"errors"
	"net/http"
	"testing"
	"time"
)

func TestArmedDeadline(t *testing.T) {
	const timeout = 10 * time.Second
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := start
	var set []time.Duration // deadlines set, from start
	var fail error
	deadline := armedDeadline(timeout, func(d time.Time) error {
		set = append(set, d.Sub(start))
		return fail
	}, func() time.Time { return now })

	for _, step := range []struct {
		at   time.Duration
		sets int // deadlines set so far
	}{
		{0, 1},                 // first batch: armed at 10s
		{time.Second, 1},       // 9s left
		{5 * time.Second, 1},   // exactly half left: still armed
		{5*time.Second + 1, 2}, // less than half: armed again, to 15s+1ns
		{9 * time.Second, 2},   // 6s left
		{time.Minute, 3},       // idle past the deadline: armed before writing
		{time.Minute + time.Second, 3},
	} {
		now = start.Add(step.at)
		if err := deadline(); err != nil {
			t.Fatal(err)
		}
		if len(set) != step.sets {
			t.Fatalf("at %v: %d deadlines set (%v), want %d", step.at, len(set), set, step.sets)
		}
		if got, want := set[len(set)-1], timeout; got-step.at > want || got <= step.at {
			t.Fatalf("at %v: armed at %v, not within the timeout", step.at, got)
		}
	}

	now = now.Add(time.Hour)
	fail = errors.New("closed")
	if err := deadline(); err == nil {
		t.Fatal("a failed SetWriteDeadline was not returned")
	}
	now = now.Add(time.Hour)
	fail = http.ErrNotSupported
	if err := deadline(); err != nil {
		t.Fatalf("a writer without deadlines: %v", err)
	}

	calls := 0
	off := armedDeadline(0, func(time.Time) error { calls++; return nil }, time.Now)
	if err := off(); err != nil || calls != 0 {
		t.Fatalf("timeout 0: err %v, %d calls", err, calls)
	}
}
