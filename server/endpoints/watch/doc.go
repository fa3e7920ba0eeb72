// Package watch serves a watch once the handler has opened it: it turns
// storage events into frames (Encoder) and writes them as a chunked HTTP
// stream (StreamHTTP), as WebSocket messages (ServeWebSocket) or as a body
// the HTTP/2 connection pulls without a goroutine (Source, server/detach),
// under the write deadline that cuts off clients that stop reading.
//
// It is separate from server/endpoints because none of this depends on
// which resource is watched or how the request was negotiated: the handler
// hands it a Format, a content type and a View that encodes one object in
// the negotiated form, and the package never reads the handler's state.
package watch
