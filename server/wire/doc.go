// Package wire holds the bytes apiloom puts on and takes off the wire: the
// watch event frame, object encoding with kind and apiVersion set, and the
// request-body decoder.
//
// It is shared by the HTTP handlers (server/endpoints) and the watch cache
// (server/cache), so that an event the cache encodes once is byte-for-byte
// what a handler would have written itself. Encoding uses encoding/json and
// decoding json-iterator: on this project's benchmarks (wire's
// BenchmarkEncode* and BenchmarkDecode*) those are the faster of the two for
// each direction.
package wire
