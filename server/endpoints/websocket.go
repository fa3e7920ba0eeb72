package endpoints

import (
	"context"
	"net/http"
	"regexp"
	"strings"

	"golang.org/x/net/websocket"

	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
)

// connectionUpgrade matches a Connection header that asks for an upgrade.
var connectionUpgrade = regexp.MustCompile(`(?i)(^|[,\s])upgrade($|[,\s])`)

// isWebSocket reports whether r asks to upgrade to a WebSocket, as
// kube-apiserver decides it (wsstream.IsWebSocketRequest).
func isWebSocket(r *http.Request) bool {
	return connectionUpgrade.MatchString(r.Header.Get("Connection")) &&
		strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// serveWebSocket serves a watch over a WebSocket: one text message per
// event, the same bytes as a frame of the HTTP stream. Like kube-apiserver's
// HandleWS it requires an Origin header (x/net/websocket's handshake check)
// and ignores anything the client sends; the client closing the socket ends
// the watch.
func serveWebSocket[O resource.Object](ctx context.Context, w http.ResponseWriter, r *http.Request, watcher storage.Watcher[O], enc *eventEncoder[O]) {
	websocket.Handler(func(ws *websocket.Conn) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		// The reader owns nothing but its loop: it ends when the client
		// closes the socket or when the deferred Close below makes Receive
		// fail, and the watch waits for it before returning.
		readerDone := make(chan struct{})
		go func() {
			defer close(readerDone)
			defer cancel()
			var discard []byte
			for websocket.Message.Receive(ws, &discard) == nil {
			}
		}()
		defer func() { _ = ws.Close(); <-readerDone }()

		events := make([]storage.Event[O], 0, 64)
		for {
			var err error
			events, err = watcher.Next(ctx, events[:0])
			for i := range events {
				frame, ferr := enc.frame(&events[i])
				if ferr != nil {
					streamFailed(r, "websocket encode", ferr)
					return
				}
				if werr := websocket.Message.Send(ws, string(frame)); werr != nil {
					return
				}
			}
			clear(events)
			if err != nil {
				if !endsQuietly(ctx, err) {
					_ = websocket.Message.Send(ws, string(enc.errorFrame(err)))
				}
				return
			}
		}
	}).ServeHTTP(w, r)
}
