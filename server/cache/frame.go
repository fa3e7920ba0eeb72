package cache

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// encodeObject is an object's JSON. Objects in the cache carry kind and
// apiVersion (the store stamps them and ingest makes sure), so the bytes
// are what the wire needs.
func encodeObject(obj runtime.Object) ([]byte, error) {
	return json.Marshal(obj)
}

// appendFrame appends one watch frame, `{"type":T,"object":O}` and a
// newline, to dst. Event types are fixed ASCII words, so they need no
// escaping.
func appendFrame(dst []byte, typ watch.EventType, objJSON []byte) []byte {
	dst = append(dst, `{"type":"`...)
	dst = append(dst, typ...)
	dst = append(dst, `","object":`...)
	dst = append(dst, objJSON...)
	return append(dst, "}\n"...)
}

// frameSize is the length of the frame appendFrame builds.
func frameSize(typ watch.EventType, objJSON []byte) int {
	return len(`{"type":"","object":}`) + len(typ) + len(objJSON) + 1
}

// newFrame builds a frame of its exact size and returns it with the
// object's JSON as a sub-slice of it, so that holding both costs one copy.
func newFrame(typ watch.EventType, objJSON []byte) (frame, obj []byte) {
	frame = appendFrame(make([]byte, 0, frameSize(typ, objJSON)), typ, objJSON)
	start := len(frame) - len(objJSON) - len("}\n")
	return frame, frame[start : start+len(objJSON) : start+len(objJSON)]
}
