package h2

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Server holds the settings shared by every HTTP/2 connection of an
// http.Server and tracks the connections for a graceful shutdown.
type Server struct {
	// MaxConcurrentStreams is how many streams one client connection may
	// have open; more are refused, so a client opens another connection.
	// Zero means 100, kube-apiserver's default.
	MaxConcurrentStreams uint32
	// MaxHeaderListSize bounds a request's decoded headers; zero means
	// 1 MiB. Larger requests get 431.
	MaxHeaderListSize uint32
	// IdleTimeout closes a connection (GOAWAY, then close) that has had no
	// open stream for that long. Zero means never; Configure takes the
	// http.Server's.
	IdleTimeout time.Duration
	// WriteTimeout bounds each write to the connection; a client that
	// stops reading for longer loses the connection. Zero means 2 minutes.
	WriteTimeout time.Duration
	// StreamWriteTimeout resets a stream (RST_STREAM(CANCEL)) that has
	// data to send, written by its handler or pending in its Source, and
	// could send none of it for that long because the client granted no
	// flow-control window, the stream's or the connection's: a client
	// that stops reading a watch lets go of it then, not at the watch's
	// end. The handler's writes fail and the Source is closed. Any data
	// sent starts the wait again. Zero means never.
	StreamWriteTimeout time.Duration
	// OverheadBudget bounds the work a client may make a connection do
	// for nothing before it is ended with GOAWAY(ENHANCE_YOUR_CALM):
	// streams reset or refused before their response began (rapid reset),
	// control frame floods, header blocks that decode to much more than
	// they weigh. It counts frames: each frame the client sends costs one,
	// a stream ended before its response began ten more, each 4 KiB of a
	// decoded header list one; each response begun earns ten back and each
	// KiB of DATA one, and the account drains in 10 seconds (calm.go).
	// A client that takes its responses never reaches it. Zero means
	// 10000; negative means no limit.
	OverheadBudget int
	// ReadHeaderTimeout bounds how long a request's header block may take
	// to arrive once begun, from its HEADERS frame to the CONTINUATION
	// that ends it, and likewise how long any other frame may take once
	// its first byte arrived: while a frame or header block is
	// incomplete, the connection can read nothing else, so a client that
	// sends one a byte at a time, or never ends it, would hold the
	// connection for good. The connection then ends with
	// GOAWAY(ENHANCE_YOUR_CALM). Zero means 30 seconds, and Configure
	// takes the http.Server's ReadHeaderTimeout; negative means no limit.
	ReadHeaderTimeout time.Duration
	// Log receives what the connection cannot tell the client: handler
	// panics and protocol errors. Nil discards.
	Log *slog.Logger

	mu       sync.Mutex
	conns    map[*conn]struct{}
	shutdown bool
}

// Configure makes hs serve HTTP/2 over TLS with s: it offers "h2" by ALPN
// and hands such connections to s, and makes hs.Shutdown end them
// gracefully (GOAWAY, then close once their streams are done).
func Configure(hs *http.Server, s *Server) {
	if hs.TLSConfig == nil {
		hs.TLSConfig = &tls.Config{}
	}
	if !slices.Contains(hs.TLSConfig.NextProtos, "h2") {
		hs.TLSConfig.NextProtos = append([]string{"h2"}, hs.TLSConfig.NextProtos...)
	}
	if !slices.Contains(hs.TLSConfig.NextProtos, "http/1.1") {
		hs.TLSConfig.NextProtos = append(hs.TLSConfig.NextProtos, "http/1.1")
	}
	if hs.TLSNextProto == nil {
		hs.TLSNextProto = make(map[string]func(*http.Server, *tls.Conn, http.Handler))
	}
	if s.IdleTimeout == 0 {
		s.IdleTimeout = hs.IdleTimeout
	}
	if s.ReadHeaderTimeout == 0 {
		s.ReadHeaderTimeout = hs.ReadHeaderTimeout
	}
	if s.MaxHeaderListSize == 0 && hs.MaxHeaderBytes > 0 {
		s.MaxHeaderListSize = uint32(hs.MaxHeaderBytes)
	}
	hs.TLSNextProto["h2"] = func(_ *http.Server, c *tls.Conn, h http.Handler) {
		ctx := context.Background()
		// net/http passes a handler that knows the connection's context
		// (BaseContext, ConnContext, and the ServerContextKey values).
		if bc, ok := h.(interface{ BaseContext() context.Context }); ok {
			ctx = bc.BaseContext()
		}
		s.ServeConn(ctx, c, h)
	}
	hs.RegisterOnShutdown(s.Shutdown)
}

// ServeConn serves HTTP/2 on nc, which has already negotiated it, until
// the client leaves, a protocol error, or a shutdown ends the connection.
// It returns once every handler it started has returned. Requests'
// contexts derive from ctx.
func (s *Server) ServeConn(ctx context.Context, nc net.Conn, h http.Handler) {
	c := newConn(ctx, s, nc, h)
	if !s.track(c, true) {
		_ = nc.Close()
		return
	}
	defer s.track(c, false)
	c.serve()
}

// Shutdown asks every connection to finish: each sends GOAWAY, refuses new
// streams, and closes when its open streams are done. It does not wait.
func (s *Server) Shutdown() {
	s.mu.Lock()
	s.shutdown = true
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.goAway()
	}
}

// track adds or removes c; adding fails once Shutdown has begun.
func (s *Server) track(c *conn, add bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !add {
		delete(s.conns, c)
		return true
	}
	if s.shutdown {
		return false
	}
	if s.conns == nil {
		s.conns = make(map[*conn]struct{})
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *Server) maxStreams() uint32 {
	if s.MaxConcurrentStreams == 0 {
		return 100
	}
	return s.MaxConcurrentStreams
}

func (s *Server) maxHeaderListSize() uint32 {
	if s.MaxHeaderListSize == 0 {
		return 1 << 20
	}
	return s.MaxHeaderListSize
}

func (s *Server) overheadBudget() int {
	if s.OverheadBudget == 0 {
		return defaultOverheadBudget
	}
	return s.OverheadBudget
}

// frameTimeout is ReadHeaderTimeout with its default; zero means none.
func (s *Server) frameTimeout() time.Duration {
	switch {
	case s.ReadHeaderTimeout == 0:
		return 30 * time.Second
	case s.ReadHeaderTimeout < 0:
		return 0
	}
	return s.ReadHeaderTimeout
}

func (s *Server) writeTimeout() time.Duration {
	if s.WriteTimeout == 0 {
		return 2 * time.Minute
	}
	return s.WriteTimeout
}

func (s *Server) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}
