package wire

// AppendWatchFrame appends one watch event as client-go's watch decoder
// reads it, {"type":"<eventType>","object":<objectJSON>} and a newline, to
// dst and returns the extended slice.
//
// objectJSON must be one complete JSON value (normally an object encoded by
// EncodeObject); eventType is one of ADDED, MODIFIED, DELETED, BOOKMARK or
// ERROR and is written unescaped. The frame is the unit the watch cache
// shares between watchers and a WebSocket message carries.
func AppendWatchFrame(dst []byte, eventType string, objectJSON []byte) []byte {
	dst = append(dst, `{"type":"`...)
	dst = append(dst, eventType...)
	dst = append(dst, `","object":`...)
	dst = append(dst, objectJSON...)
	return append(dst, "}\n"...)
}

// WatchFrameSize is the length of the frame AppendWatchFrame produces, for
// callers that size a buffer once.
func WatchFrameSize(eventType string, objectJSON []byte) int {
	return len(`{"type":"","object":}`) + len(eventType) + len(objectJSON) + 1
}
