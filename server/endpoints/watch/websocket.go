package watch

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"time"

	"golang.org/x/net/websocket"

	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
)

// maxClientMessage bounds what a watching client may send in one message;
// nothing is expected, so more ends the watch.
const maxClientMessage = 4 << 10

// connectionUpgrade matches a Connection header that asks for an upgrade.
var connectionUpgrade = regexp.MustCompile(`(?i)(^|[,\s])upgrade($|[,\s])`)

// IsWebSocket reports whether r asks to upgrade to a WebSocket, as
// kube-apiserver decides it (wsstream.IsWebSocketRequest).
func IsWebSocket(r *http.Request) bool {
	return connectionUpgrade.MatchString(r.Header.Get("Connection")) &&
		strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// ServeWebSocket serves a watch over a WebSocket: one text message per
// event, the same bytes as a frame of the HTTP stream, each written within
// writeTimeout (none if 0). Like kube-apiserver's HandleWS it requires an
// Origin header (x/net/websocket's handshake check) and ignores anything
// the client sends; the client closing the socket ends the watch.
func ServeWebSocket[O resource.Object, V View[O]](ctx context.Context, w http.ResponseWriter, r *http.Request, watcher *storage.Blocking[O], enc *Encoder[O, V], writeTimeout time.Duration) {
	websocket.Handler(func(ws *websocket.Conn) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		// The reader owns nothing but its loop: it ends when the client
		// closes the socket or when the deferred Close below makes Receive
		// fail, and the watch waits for it before returning.
		ws.MaxPayloadBytes = maxClientMessage
		readerDone := make(chan struct{})
		go func() {
			defer close(readerDone)
			defer cancel()
			var discard []byte
			for websocket.Message.Receive(ws, &discard) == nil {
			}
		}()
		defer func() { _ = ws.Close(); <-readerDone }()

		// One Write is one message: text for JSON frames, binary for
		// CBOR and protobuf, as kube-apiserver sends them.
		ws.PayloadType = websocket.TextFrame
		if enc.form.Format != JSON {
			ws.PayloadType = websocket.BinaryFrame
		}
		send := func(frame []byte) error {
			if enc.form.Format == Protobuf {
				frame = frame[4:] // a message is one event: no length prefix
			}
			_, err := ws.Write(frame)
			return err
		}
		deadline := writeDeadline(writeTimeout, ws.SetWriteDeadline)
		if err := enc.pump(ctx, watcher, deadline, send, func() error { return nil }); err != nil {
			streamFailed(r, "websocket watch", err)
		}
	}).ServeHTTP(w, r)
}
