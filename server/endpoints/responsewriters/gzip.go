package responsewriters

import (
	"compress/gzip"
	"io"
	"net/http"
	"sync"
)

// Responses are compressed as kube-apiserver compresses them (its
// APIResponseCompression feature, on by default since 1.16): with gzip, when
// the client's Accept-Encoding names gzip and the response body is larger
// than GzipThreshold. Smaller bodies are not worth the CPU (most single
// objects are a few KiB); a large list, repetitive JSON, shrinks several
// times over, which is what a client far from the server waits for. Watches are never
// compressed: their events are small and must reach the client at once.

const (
	// GzipThreshold is kube-apiserver's defaultGzipThresholdBytes: a body
	// of at most this many bytes goes out as it is.
	GzipThreshold = 128 << 10
	// GzipLevel is kube-apiserver's gzipContentEncodingLevel, the fastest:
	// it costs a fraction of gzip.DefaultCompression's CPU for output at
	// most 1.5 times larger (kubernetes#112296).
	GzipLevel = gzip.BestSpeed
)

// gzipWriters holds idle gzip writers: each holds about 1.2 MiB of
// compressor state (at GzipLevel) that a response would otherwise allocate
// again.
var gzipWriters = sync.Pool{New: func() any {
	gw, err := gzip.NewWriterLevel(nil, GzipLevel)
	if err != nil {
		panic(err) // GzipLevel is a valid level
	}
	return gw
}}

// heldBuffers holds the buffers of BodyWriters, each of GzipThreshold
// bytes: grown by append instead, the buffer of each large list would cost
// about four times its size in allocations.
var heldBuffers = sync.Pool{New: func() any {
	b := make([]byte, 0, GzipThreshold)
	return &b
}}

// writeBody answers hw with code and data, gzipped when gzip is true and
// data is larger than GzipThreshold; hw's other headers are set already.
// Errors writing are the client's, who went away, and are not returned.
func writeBody(hw http.ResponseWriter, code int, gzip bool, data []byte) {
	b := NewBodyWriter(hw, code, gzip)
	b.start(gzip && len(data) > GzipThreshold)
	_, _ = b.Write(data)
	_ = b.Close()
}

// BodyWriter writes a response body of a size not known in advance, gzipped
// when the client accepts gzip and the body turns out to be larger than
// GzipThreshold. Until then it holds the status line and up to
// GzipThreshold bytes back, so memory per response stays bounded by that
// buffer and the compressor's state, however long the body. Close must be
// called at the end of the body; nothing is sent before Write or Close.
type BodyWriter struct {
	hw   http.ResponseWriter
	code int
	gzip bool // the client accepts gzip and compression is on

	held *[]byte   // from heldBuffers while the body may still be small
	w    io.Writer // where the body goes once the header is out; nil before
	gw   *gzip.Writer
}

// NewBodyWriter returns a BodyWriter answering hw with code; its headers
// other than Content-Encoding and Vary must be set on hw already.
func NewBodyWriter(hw http.ResponseWriter, code int, gzip bool) *BodyWriter {
	return &BodyWriter{hw: hw, code: code, gzip: gzip}
}

func (b *BodyWriter) Write(p []byte) (int, error) {
	if b.w != nil {
		return b.w.Write(p)
	}
	if !b.gzip {
		b.start(false)
		return b.w.Write(p)
	}
	if b.held == nil {
		b.held = heldBuffers.Get().(*[]byte)
	}
	if len(*b.held)+len(p) <= GzipThreshold {
		*b.held = append(*b.held, p...)
		return len(p), nil
	}
	b.start(true)
	if _, err := b.w.Write(*b.held); err != nil {
		return 0, err
	}
	b.release()
	return b.w.Write(p)
}

// start sends the header, with Content-Encoding: gzip when compressed.
func (b *BodyWriter) start(compressed bool) {
	b.w = b.hw
	if compressed {
		h := b.hw.Header()
		h.Set("Content-Encoding", "gzip")
		h.Add("Vary", "Accept-Encoding")
		b.gw = gzipWriters.Get().(*gzip.Writer)
		b.gw.Reset(b.hw)
		b.w = b.gw
	}
	b.hw.WriteHeader(b.code)
}

// release returns the held-back buffer to the pool.
func (b *BodyWriter) release() {
	if b.held != nil {
		*b.held = (*b.held)[:0]
		heldBuffers.Put(b.held)
		b.held = nil
	}
}

// Close ends the body: what was held back goes out uncompressed, or the
// compressed stream is finished and its writer returned to the pool.
func (b *BodyWriter) Close() error {
	if b.w == nil {
		b.start(false)
		var err error
		if b.held != nil {
			_, err = b.hw.Write(*b.held)
			b.release()
		}
		return err
	}
	if b.gw == nil {
		return nil
	}
	err := b.gw.Close()
	b.gw.Reset(nil)
	gzipWriters.Put(b.gw)
	b.gw = nil
	return err
}
