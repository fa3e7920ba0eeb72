package endpoints

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/httpstream/wsstream"

	"github.com/apiloom/apiloom/server/hook"
)

// DefaultMaxStreams is how many calls of one stream subresource of one
// kind run at once by default. kube-apiserver has no such limit (only
// HTTP/2's streams per connection); one is here because every stream
// holds a goroutine and its parent object for as long as it runs. An
// idle stream holds about 16 KiB in the handler (BenchmarkIdleStream:
// its goroutine's stack, its request, parent and options; a connection's
// buffers come on top), so 10,000 are some 160 MiB at most, and let the
// 1,000 log followers of a busy cluster run ten times over.
const DefaultMaxStreams = 10000

// stream serves GET of a stream: its options decoded from the query
// (DecodeQuery), the parent read, then the hook's bytes answered 200
// text/plain, each of its Writes flushed to the client before it returns
// (chunked on HTTP/1.1, DATA frames on HTTP/2), or over a WebSocket when
// the request upgrades. Memory per stream is bounded by what one Write
// passes: nothing is buffered beyond it. The hook's context ends when the
// client goes away or the server shuts down. An error before the first
// byte is the client's answer; after it, it can only end the stream, and
// is logged.
func (h *handler[O]) stream(w http.ResponseWriter, r *http.Request, rt route, c *custom[O]) error {
	opts := c.def.NewInput()
	if err := DecodeQuery(r.URL.Query(), opts); err != nil {
		return err
	}
	if c.streams.Add(1) > h.maxStreams {
		c.streams.Add(-1)
		return apierrors.NewTooManyRequests(fmt.Sprintf("too many %s streams of %s, please try again later", c.def.Name, h.gr), 1)
	}
	defer c.streams.Add(-1)
	ctx := r.Context()
	parent, err := h.parent(ctx, rt)
	if err != nil {
		return err
	}
	if wsstream.IsWebSocketRequest(r) {
		h.streamWebSocket(w, r, rt, c, parent, opts)
		return nil
	}
	fw := &flushWriter{w: w, rc: http.NewResponseController(w)}
	err = h.callStream(ctx, rt, c, parent, opts, fw)
	if ctx.Err() != nil {
		return nil // the client went away: nobody to answer
	}
	if err != nil && !fw.started {
		return h.customError(ctx, c, rt, err)
	}
	if err != nil {
		slog.ErrorContext(ctx, "endpoints: stream ended by its handler's error", "resource", h.gr.String(),
			"subresource", c.def.Name, "namespace", rt.namespace, "name", rt.name, "err", err)
	}
	fw.start() // an empty stream is an empty 200
	return nil
}

// callStream runs c's stream on parent into out until it returns, with
// no deadline (the stream lasts as long as its client): a panic is an
// error.
func (h *handler[O]) callStream(ctx context.Context, rt route, c *custom[O], parent O, opts runtime.Object, out io.Writer) error {
	req := h.customRequest(ctx, hook.Read, c, false, rt)
	var herr error
	if err := hook.Call(req, 0, func(req *hook.Request) { herr = c.def.Stream(req, parent, opts, out) }); err != nil {
		return err
	}
	return herr
}

// streamWebSocket serves the stream over a WebSocket, as kube-apiserver
// serves pods/log to a client that upgrades: the hook writes into a pipe
// that wsstream's Reader copies to the connection, one message per
// Write (base64 or binary, by the protocol the client asks for). When
// the connection ends, the pipe fails the hook's next Write and its
// context ends; the hook's goroutine is waited for.
func (h *handler[O]) streamWebSocket(w http.ResponseWriter, r *http.Request, rt route, c *custom[O], parent O, opts runtime.Object) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := h.callStream(ctx, rt, c, parent, opts, pw)
		if err != nil && ctx.Err() == nil && !errors.Is(err, io.ErrClosedPipe) {
			slog.ErrorContext(ctx, "endpoints: stream ended by its handler's error", "resource", h.gr.String(),
				"subresource", c.def.Name, "namespace", rt.namespace, "name", rt.name, "err", err)
		}
		_ = pw.CloseWithError(io.EOF)
	}()
	// wsstream closes the connection when the client does, but goes on
	// waiting for the hook's next Write: the connection's Close ends the
	// hook's context, so that an idle stream ends with its client.
	hw := hijackNotifier{ResponseWriter: w, onClose: cancel}
	if err := wsstream.NewReader(pr, true, wsstream.NewDefaultReaderProtocols()).Copy(hw, r); err != nil {
		slog.DebugContext(ctx, "endpoints: websocket stream ended", "path", r.URL.Path, "err", err)
	}
	cancel()
	_ = pr.CloseWithError(io.ErrClosedPipe)
	<-done
}

// hijackNotifier is a ResponseWriter whose hijacked connection calls
// onClose when it is closed.
type hijackNotifier struct {
	http.ResponseWriter
	onClose func()
}

func (h hijackNotifier) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	return closeNotifyConn{Conn: c, onClose: h.onClose}, brw, nil
}

// closeNotifyConn is a connection that calls onClose when closed.
type closeNotifyConn struct {
	net.Conn
	onClose func()
}

func (c closeNotifyConn) Close() error {
	c.onClose()
	return c.Conn.Close()
}

// flushWriter is the stream's io.Writer over HTTP: the first Write
// starts the 200 text/plain answer, and every Write is flushed before it
// returns, so the client has each as soon as the hook writes it.
type flushWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	started bool
}

func (f *flushWriter) start() {
	if f.started {
		return
	}
	f.started = true
	f.w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	f.w.Header().Set("X-Content-Type-Options", "nosniff")
	f.w.WriteHeader(http.StatusOK)
}

func (f *flushWriter) Write(p []byte) (int, error) {
	f.start()
	n, err := f.w.Write(p)
	if err != nil {
		return n, err
	}
	return n, f.rc.Flush()
}

// errBadQuery is the 400 for a query parameter that does not decode.
func errBadQuery(name, value string, err error) error {
	return apierrors.NewBadRequest(fmt.Sprintf("invalid value %q for query parameter %q: %v", value, name, err))
}
