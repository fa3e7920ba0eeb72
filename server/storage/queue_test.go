package storage

import (
	"context"
	"errors"
	"io"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

type obj = *unstructured.Unstructured

func event(name string) Event[obj] {
	u := &unstructured.Unstructured{}
	u.SetName(name)
	return Event[obj]{Type: watch.Added, Object: u}
}

func names(es []Event[obj]) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Object.GetName()
	}
	return out
}

func TestQueueBoundAndOrder(t *testing.T) {
	q := newEventQueue[obj](2)
	if !q.tryPush(event("a")) || !q.tryPush(event("b")) {
		t.Fatal("push below the limit failed")
	}
	if q.tryPush(event("c")) {
		t.Fatal("push beyond the limit succeeded")
	}
	got, err := q.next(t.Context(), nil)
	if err != nil || len(got) != 2 || got[0].Object.GetName() != "a" || got[1].Object.GetName() != "b" {
		t.Fatalf("next: %v, %v", names(got), err)
	}
	if !q.tryPush(event("c")) {
		t.Fatal("push after draining failed")
	}
}

func TestQueuePushWaitsForRoom(t *testing.T) {
	q := newEventQueue[obj](1)
	q.tryPush(event("a"))
	pushed := make(chan error)
	go func() { pushed <- q.push(t.Context(), event("b")) }()

	got, err := q.next(t.Context(), nil)
	if err != nil || len(got) != 1 || got[0].Object.GetName() != "a" {
		t.Fatalf("next: %v, %v", names(got), err)
	}
	if err := <-pushed; err != nil {
		t.Fatal(err)
	}
	got, err = q.next(t.Context(), got[:0])
	if err != nil || len(got) != 1 || got[0].Object.GetName() != "b" {
		t.Fatalf("next: %v, %v", names(got), err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	q.tryPush(event("c"))
	go func() { pushed <- q.push(ctx, event("d")) }()
	cancel()
	if err := <-pushed; !errors.Is(err, context.Canceled) {
		t.Fatalf("push with a cancelled context: %v", err)
	}
}

func TestQueueCloseAfterDrain(t *testing.T) {
	q := newEventQueue[obj](10)
	q.tryPush(event("a"))
	q.close(io.EOF)
	q.close(errors.New("ignored: only the first close counts"))
	got, err := q.next(t.Context(), nil)
	if err != nil || len(got) != 1 {
		t.Fatalf("queued events before the error: %v, %v", names(got), err)
	}
	if _, err := q.next(t.Context(), nil); !errors.Is(err, io.EOF) {
		t.Fatalf("after drain: %v, want io.EOF", err)
	}
}

func TestQueueNextWaits(t *testing.T) {
	q := newEventQueue[obj](10)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := q.next(ctx, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("next on an empty queue with a cancelled context: %v", err)
	}
	done := make(chan []Event[obj])
	go func() {
		got, _ := q.next(t.Context(), nil)
		done <- got
	}()
	q.tryPush(event("a"))
	if got := <-done; len(got) != 1 {
		t.Fatalf("woken with %v", names(got))
	}
}
