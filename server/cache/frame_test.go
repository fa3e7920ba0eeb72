package cache

import (
	"bytes"
	"runtime"
	"testing"
)

func TestSharedFrame(t *testing.T) {
	var s sharedFrame
	builds := 0
	build := func() []byte { builds++; return bytes.Repeat([]byte{'x'}, 1024) }

	held := s.get(build)
	again := s.get(build)
	if builds != 1 || &again[0] != &held[0] || len(again) != len(held) {
		t.Fatalf("while held: %d builds, shared=%v", builds, &again[0] == &held[0])
	}
	runtime.GC()
	if s.get(build); builds != 1 {
		t.Fatalf("a held frame was made again (%d builds)", builds)
	}
	runtime.KeepAlive(held)

	// Nobody holds it: the collector takes it, and the next get makes it.
	held, again = nil, nil
	for i := 0; i < 10 && builds == 1; i++ {
		runtime.GC()
		s.get(build)
	}
	if builds != 2 {
		t.Fatalf("a frame nobody held was kept through 10 collections (%d builds)", builds)
	}
}
