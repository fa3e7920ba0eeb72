package history

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestClassify(t *testing.T) {
	gr := schema.GroupResource{Group: "example.apiloom.io", Resource: "widgets"}
	for _, tc := range []struct {
		name    string
		err     error
		outcome Outcome
		code    int
	}{
		{"conflict", apierrors.NewConflict(gr, "a", errors.New("rv")), Failed, 409},
		{"already exists", apierrors.NewAlreadyExists(gr, "a"), Failed, 409},
		{"not found", apierrors.NewNotFound(gr, "a"), Failed, 404},
		{"invalid", apierrors.NewInvalid(schema.GroupKind{Kind: "Widget"}, "a", nil), Failed, 422},
		{"too many requests", apierrors.NewTooManyRequests("later", 1), Failed, 429},
		{"wrapped conflict", fmt.Errorf("update: %w", apierrors.NewConflict(gr, "a", errors.New("rv"))), Failed, 409},
		{"timeout", apierrors.NewTimeoutError("slow", 1), Unknown, 504},
		{"internal", apierrors.NewInternalError(errors.New("etcdserver: request timed out")), Unknown, 500},
		{"unavailable", apierrors.NewServiceUnavailable("down"), Unknown, 503},
		{"deadline", context.DeadlineExceeded, Unknown, 0},
		{"connection reset", errors.New("read tcp: connection reset by peer"), Unknown, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			outcome, code, _ := Classify(tc.err)
			if outcome != tc.outcome || code != tc.code {
				t.Errorf("Classify = %v %d, want %v %d", outcome, code, tc.outcome, tc.code)
			}
		})
	}
}

func TestRecorderOperations(t *testing.T) {
	var clock time.Duration
	r := NewRecorder(WithClock(func() time.Duration { clock++; return clock }))
	gr := schema.GroupResource{Resource: "widgets"}

	create := r.Call(1, Request{Kind: Create, Key: "ns/a", Value: "v1"})
	get := r.Call(2, Request{Kind: Get, Key: "ns/b"})
	update := r.Call(3, Request{Kind: Update, Key: "ns/a", PreconditionRV: 7, Value: "v2"})
	lost := r.Call(4, Request{Kind: Delete, Key: "ns/a"})
	create.Return(Response{RV: 5}, nil)
	get.Return(Response{}, apierrors.NewNotFound(gr, "b"))
	update.Return(Response{}, apierrors.NewConflict(gr, "a", errors.New("rv")))

	h := r.History()
	want := []struct {
		id      int
		outcome Outcome
		call    time.Duration
		ret     time.Duration
	}{{1, Acknowledged, 1, 5}, {2, Acknowledged, 2, 6}, {3, Failed, 3, 7}, {4, Pending, 4, 0}}
	if len(h.Operations) != len(want) {
		t.Fatalf("%d operations, want %d", len(h.Operations), len(want))
	}
	for i, w := range want {
		op := h.Operations[i]
		if op.ID != w.id || op.Outcome != w.outcome || op.Call != w.call || op.Return != w.ret {
			t.Errorf("operation %d = %v (call %v return %v), want id %d %v call %v return %v", i, op, op.Call, op.Return, w.id, w.outcome, w.call, w.ret)
		}
	}
	if h.Operations[1].Found || h.Operations[1].Code != 404 {
		t.Errorf("get of a missing object = %v, want not found with code 404", h.Operations[1])
	}
	if h.Operations[2].Code != 409 || h.Operations[2].Reason != "Conflict" {
		t.Errorf("conflicting update = %v, want 409 Conflict", h.Operations[2])
	}
	lost.Return(Response{}, context.DeadlineExceeded)
	if got := r.History().Operations[3].Outcome; got != Unknown {
		t.Errorf("timed out delete: outcome %v, want unknown", got)
	}
}

// TestRecorderConcurrent records from many goroutines (run with -race):
// ids stay unique and every event lands in its own stream, in order.
func TestRecorderConcurrent(t *testing.T) {
	r := NewRecorder()
	const clients, perClient = 8, 50
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			s := r.Watch(c, "", 0, 0)
			for i := range perClient {
				call := r.Call(c, Request{Kind: Update, Key: "k", Value: fmt.Sprint(i)})
				s.Observe(Event{Type: Modified, Key: "k", RV: int64(i + 1)})
				call.Return(Response{RV: int64(i + 1)}, nil)
			}
			s.End(Closed, nil)
		})
	}
	wg.Wait()
	h := r.History()
	seen := map[int]bool{}
	for _, op := range h.Operations {
		if seen[op.ID] || op.Outcome != Acknowledged || op.Return < op.Call {
			t.Fatalf("bad operation %v (call %v return %v)", op, op.Call, op.Return)
		}
		seen[op.ID] = true
	}
	if len(seen) != clients*perClient {
		t.Fatalf("%d operations, want %d", len(seen), clients*perClient)
	}
	for _, s := range h.Streams {
		if len(s.Events) != perClient || s.End != Closed {
			t.Fatalf("stream %d: %d events, end %v", s.ID, len(s.Events), s.End)
		}
		for i, e := range s.Events {
			if e.RV != int64(i+1) {
				t.Fatalf("stream %d event %d has rv %d", s.ID, i, e.RV)
			}
		}
	}
}
