// Package h2 is apiloom's HTTP/2 server connection: the part of the server
// that carries client-go's watches. It speaks RFC 9113 over a TLS
// connection that negotiated "h2" and serves each request through an
// http.Handler, like x/net/http2, with one difference that matters for a
// watch server: a handler may hand the rest of its body to the connection
// as a detach.Source (package server/detach) and return. The connection's single writer
// goroutine then pulls the bytes when the stream may send, straight into
// its write buffer, so an idle watch costs neither a goroutine nor a
// per-stream buffer, and fanning one event out to a thousand watches of a
// connection is a thousand appends and a few large writes rather than two
// goroutine hand-offs and a flush per stream.
//
// Frames are read with x/net/http2's Framer and headers decoded with its
// hpack package; frames are written by this package, since it builds DATA
// frames in place around a Source's bytes.
//
// Not supported, because no Kubernetes client uses them: server push,
// CONNECT, Hijack, and trailers in responses. Request trailers are read and
// dropped.
package h2
