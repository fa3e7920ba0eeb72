package apiserver

import (
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"time"

	"golang.org/x/net/http2"

	"github.com/apiloom/apiloom/server/internal/h2"
)

// The values of Options.HTTP2Server (--http2-server).
const (
	// HTTP2ServerApiloom serves HTTP/2 with server/internal/h2: a watch's
	// body is pulled by the connection's writer, so an idle watch holds
	// no goroutine and no buffer.
	HTTP2ServerApiloom = "apiloom"
	// HTTP2ServerGo serves HTTP/2 with golang.org/x/net/http2, configured
	// as kube-apiserver configures it. Its ResponseWriter is no
	// detach.Detacher, so each watch is written by its handler goroutine.
	HTTP2ServerGo = "go"
)

const (
	// connWriteTimeout bounds each write to an HTTP/2 connection, with
	// either implementation: a client that reads nothing for that long
	// loses the connection (h2.Server.WriteTimeout,
	// http2.Server.WriteByteTimeout).
	connWriteTimeout = 2 * time.Minute
	// goHTTP2FrameAndStreamWindow is kube-apiserver's size of the largest
	// frame it reads and of each stream's receive window, "at least 99%
	// of serialized resources": a typical create arrives in one frame,
	// and the connection's window is this times the stream limit.
	goHTTP2FrameAndStreamWindow = 256 << 10
)

// configureHTTP2 makes hs serve HTTP/2 (ALPN "h2") with the implementation
// o.HTTP2Server names, limited by o's stream limit and write timeouts and
// hs's idle timeout; both end their connections gracefully (GOAWAY) on
// hs.Shutdown.
func configureHTTP2(hs *http.Server, o *Options, log *slog.Logger) error {
	switch o.HTTP2Server {
	case HTTP2ServerApiloom:
		h2.Configure(hs, &h2.Server{
			MaxConcurrentStreams: uint32(o.http2MaxStreams()),
			IdleTimeout:          hs.IdleTimeout,
			WriteTimeout:         connWriteTimeout,
			StreamWriteTimeout:   o.WatchWriteTimeout,
			OverheadBudget:       o.HTTP2OverheadBudget,
			Log:                  log,
		})
		return nil
	case HTTP2ServerGo:
		if err := http2.ConfigureServer(hs, goHTTP2Server(o, hs.IdleTimeout)); err != nil {
			return fmt.Errorf("configure Go's HTTP/2 server: %w", err)
		}
		return nil
	default:
		return fmt.Errorf("apiserver: unknown --http2-server %q", o.HTTP2Server)
	}
}

// goHTTP2Server is x/net's HTTP/2 server as kube-apiserver (k8s.io/
// apiserver's SecureServingInfo.Serve) sets it up, with our stream limit
// and idle timeout, plus the connection write timeout our own server has.
//
// --watch-write-timeout is not a setting of it: the watch handler sets a
// write deadline on its stream before each batch of events
// (http.ResponseController), which x/net enforces by resetting the stream
// with INTERNAL_ERROR. It thus bounds how long one batch may take, where
// our server bounds how long a stream with data pending may send nothing,
// and it applies to watches only.
func goHTTP2Server(o *Options, idle time.Duration) *http2.Server {
	streams := o.http2MaxStreams()
	return &http2.Server{
		MaxConcurrentStreams:     uint32(streams),
		IdleTimeout:              idle,
		WriteByteTimeout:         connWriteTimeout,
		MaxReadFrameSize:         goHTTP2FrameAndStreamWindow,
		MaxUploadBufferPerStream: goHTTP2FrameAndStreamWindow,
		// Enough for every stream's window at once, but HTTP/2 windows
		// end at 2^31-1 (kube-apiserver's product overflows int32 beyond
		// 8191 streams; here it is capped).
		MaxUploadBufferPerConnection: int32(min(int64(goHTTP2FrameAndStreamWindow)*int64(streams), math.MaxInt32)),
	}
}
