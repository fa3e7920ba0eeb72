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
	got, err := q.poll(t.Context(), nil)
	if err != nil || len(got) != 2 || got[0].Object.GetName() != "a" || got[1].Object.GetName() != "b" {
		t.Fatalf("poll: %v, %v", names(got), err)
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

	got, err := q.poll(t.Context(), nil)
	if err != nil || len(got) != 1 || got[0].Object.GetName() != "a" {
		t.Fatalf("poll: %v, %v", names(got), err)
	}
	if err := <-pushed; err != nil {
		t.Fatal(err)
	}
	got, err = q.poll(t.Context(), got[:0])
	if err != nil || len(got) != 1 || got[0].Object.GetName() != "b" {
		t.Fatalf("poll: %v, %v", names(got), err)
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
	got, err := q.poll(t.Context(), nil)
	if err != nil || len(got) != 1 {
		t.Fatalf("queued events before the error: %v, %v", names(got), err)
	}
	if _, err := q.poll(t.Context(), nil); !errors.Is(err, io.EOF) {
		t.Fatalf("after drain: %v, want io.EOF", err)
	}
}

func TestQueuePollAndNotify(t *testing.T) {
	q := newEventQueue[obj](10)
	ctx, cancel := context.WithCancel(t.Context())
	if got, err := q.poll(ctx, nil); len(got) != 0 || err != nil {
		t.Fatalf("poll of an empty queue: %v, %v", names(got), err)
	}
	cancel()
	if _, err := q.poll(ctx, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("poll of an empty queue with a cancelled context: %v", err)
	}
	woken := 0
	q.notifyOnce(func() { woken++ })
	if woken != 0 {
		t.Fatal("woken with nothing queued")
	}
	q.tryPush(event("a"))
	q.tryPush(event("b"))
	if woken != 1 {
		t.Fatalf("woken %d times by two pushes, want once", woken)
	}
	q.notifyOnce(func() { woken++ })
	if woken != 2 {
		t.Fatal("not woken at once with events queued")
	}
	if got, _ := q.poll(t.Context(), nil); len(got) != 2 {
		t.Fatalf("poll: %v", names(got))
	}
	q.notifyOnce(func() { woken++ })
	q.close(io.EOF)
	if woken != 3 {
		t.Fatal("close did not wake")
	}
}
