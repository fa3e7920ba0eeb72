package wire

import (
	"bytes"
	gojson "encoding/json"
	"io"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
)

func TestAppendWatchFrame(t *testing.T) {
	got := AppendWatchFrame([]byte("prefix"), "ADDED", []byte(`{"kind":"Thing"}`))
	want := `prefix{"type":"ADDED","object":{"kind":"Thing"}}` + "\n"
	if string(got) != want {
		t.Fatalf("frame = %q, want %q", got, want)
	}
	if n := WatchFrameSize("ADDED", []byte(`{"kind":"Thing"}`)); n != len(want)-len("prefix") {
		t.Fatalf("WatchFrameSize = %d, want %d", n, len(want)-len("prefix"))
	}
}

// TestWatchFramesDecodeLikeClientGo reads frames back with the framing and
// decoder client-go's watch uses, so a change here that client-go could not
// read fails.
func TestWatchFramesDecodeLikeClientGo(t *testing.T) {
	obj, err := EncodeObject(sampleThing(), thingGVK)
	if err != nil {
		t.Fatal(err)
	}
	var stream []byte
	for _, typ := range []string{"ADDED", "MODIFIED", "DELETED"} {
		stream = AppendWatchFrame(stream, typ, obj)
	}
	// The JSON framer hands out one whole JSON value per Read.
	r := json.Framer.NewFrameReader(io.NopCloser(bytes.NewReader(stream)))
	buf := make([]byte, 1<<16)
	for i, typ := range []string{"ADDED", "MODIFIED", "DELETED"} {
		n, err := r.Read(buf)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		var ev metav1.WatchEvent
		if err := gojson.Unmarshal(buf[:n], &ev); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if ev.Type != typ || !bytes.Equal(ev.Object.Raw, obj) {
			t.Fatalf("frame %d = %s %s", i, ev.Type, ev.Object.Raw)
		}
	}
}
