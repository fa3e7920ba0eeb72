package cache

import (
	"bytes"
	"sync"
	"unsafe"
	"weak"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/server/wire"
)

// encodeObject is an object's JSON as the wire carries it. Every object
// the cache holds or builds carries its kind and apiVersion already (the
// store stamps them, ingest makes sure), so no copy is made for them.
func encodeObject(obj runtime.Object) ([]byte, error) {
	return wire.EncodeObject(obj, obj.GetObjectKind().GroupVersionKind())
}

// newFrame builds the watch frame of an event of type typ carrying the
// object encoded as objJSON, at its exact size, and returns it with the
// object's JSON as a sub-slice of it, so that keeping both costs one copy.
func newFrame(typ watch.EventType, objJSON []byte) (frame, obj []byte) {
	t := string(typ)
	frame = wire.AppendWatchFrame(make([]byte, 0, wire.WatchFrameSize(t, objJSON)), t, objJSON)
	// The object ends the frame but for its closing "}\n".
	end := len(frame) - len("}\n")
	start := end - len(objJSON)
	if start < 0 || !bytes.Equal(frame[start:end], objJSON) {
		return frame, objJSON
	}
	return frame, frame[start:end:end]
}

// sharedFrame is a frame made on demand and shared for as long as anyone
// holds it, then left to the garbage collector: the ADDED frame of a
// version that entered the cache as MODIFIED. Initial events (a watch-list
// sync) and watchers whose selector the object enters want it; kept for
// the item's life, it was a second copy of every updated object once any
// client had synced with watch-list, as large as the items' own frames
// (183 MiB at 100,000 objects, by heap profile). Made again after it is
// gone, it costs one copy per sync, and watchers syncing together still
// share one.
type sharedFrame struct {
	mu sync.Mutex // guards p and n
	p  weak.Pointer[byte]
	n  int
}

// get returns the frame, made by build if nobody holds it.
func (s *sharedFrame) get(build func() []byte) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.p.Value(); p != nil {
		return unsafe.Slice(p, s.n)
	}
	b := build()
	if len(b) > 0 {
		s.p, s.n = weak.Make(&b[0]), len(b)
	}
	return b
}
