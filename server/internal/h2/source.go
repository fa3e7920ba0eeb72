package h2

// A Source is the rest of a response body, pulled by the connection's
// writer when the stream may send, instead of pushed by a handler
// goroutine. A watch holds its stream for up to an hour and is idle most of
// that time; as a Source it costs no goroutine, no stack and no buffer
// while idle, and its bytes go from the producer's shared encoding straight
// into the connection's write buffer.
//
// The connection never calls Append and Close at the same time, and calls
// Close exactly once; the source calls wake from any goroutine.
type Source interface {
	// Append appends to dst at most limit bytes of the body that are ready
	// now, without blocking, and reports whether the body ends with them.
	// Returning nothing and false means "nothing yet": the connection
	// waits for wake.
	Append(dst []byte, limit int) (out []byte, end bool)
	// Start hands the source the function it calls whenever Append may
	// have more to give (new data, or the end). wake never blocks and may
	// be called any number of times, before or after Append returns
	// nothing; a call the connection does not need costs a little CPU.
	// Start is called once, before the first Append.
	Start(wake func())
	// Close is called once, when the stream ends for any reason (the body
	// ended, the client reset the stream, the connection closed); the
	// source lets go of what it holds. Append is not called after it.
	Close()
}

// A Detacher is the ResponseWriter of a stream whose connection can carry
// the rest of the body from a Source. After DetachBody the handler returns
// at once and must not use the ResponseWriter again; the request's context
// stays alive until the stream ends, so the source may use it. Headers not
// yet written are sent first, as if WriteHeader(200) had been called.
type Detacher interface {
	DetachBody(src Source)
}
