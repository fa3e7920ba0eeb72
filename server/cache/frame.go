package cache

import (
	"bytes"

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
