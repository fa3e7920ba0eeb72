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
// A request's handler runs on one of the connection's handler goroutines
// (workers.go), which serve one request after another and keep the stack
// the handler chain grew; a new goroutine per request grew its stack
// again each time (growing stacks was 8.6% of the server's CPU on creates,
// two thirds of it in handlers).
//
// Frames are read with x/net/http2's Framer and headers decoded with its
// hpack package; frames are written by this package, since it builds DATA
// frames in place around a Source's bytes.
//
// Why not Go's own HTTP/2 server (golang.org/x/net/http2, which the server
// still serves with under --http2-server=go, as a fallback): there a watch
// is a handler goroutine that waits for events and pushes each batch
// through a per-stream buffer and a hand-off to the connection's serve
// loop. Three runs on a shared 2-core machine, 1 KiB objects, each server
// measured in the same run as the other, in either order:
//
//	                                    this package   x/net/http2
//	server CPU per delivered event       8.8-10.0 µs   20.8-29.8 µs  (1,000 watchers, 20 writes/s)
//	write→all-received p99               75-109 ms     130-511 ms    (x/net once fell to 16.9 writes/s)
//	RSS per idle watcher                 3.4-4.0 KiB   15.5-16.2 KiB (10,000 watchers)
//	goroutines per idle watcher          0             0.91-1.00
//
// Reproduce with
//
//	TARGETS="apiloom apiloom-gohttp2" SCENARIOS="fanout idle" hack/load.sh
//
// Not supported, because no Kubernetes client uses them: server push,
// CONNECT, Hijack, and trailers in responses. Request trailers are read and
// dropped.
package h2
