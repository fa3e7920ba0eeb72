package detach

import (
	"context"
	"testing"
)

// TestStreamContext: StreamContext finds the stream's context under the
// values middleware added, shares its end, and is the request's own
// context where no connection marked one.
func TestStreamContext(t *testing.T) {
	type key struct{}
	stream, cancel := context.WithCancel(context.Background())
	request := context.WithValue(WithStreamContext(stream), key{}, "value")
	got := StreamContext(request)
	if got.Value(key{}) != nil {
		t.Fatal("the stream's context holds a value added after it")
	}
	cancel()
	if got.Err() == nil || request.Err() == nil {
		t.Fatalf("after the stream ended: stream %v, request %v", got.Err(), request.Err())
	}
	plain := context.WithValue(context.Background(), key{}, "value")
	if StreamContext(plain) != plain {
		t.Fatal("without a stream context, StreamContext is not the context itself")
	}
}
