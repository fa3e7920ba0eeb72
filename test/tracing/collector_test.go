package tracing

import (
	"context"
	"encoding/hex"
	"net"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
)

// collector is an OTLP/gRPC trace receiver: it keeps every span it is
// sent and wakes whoever waits for one.
type collector struct {
	coltracepb.UnimplementedTraceServiceServer
	addr string

	mu      sync.Mutex
	spans   []*tracepb.Span
	exports int
	changed chan struct{} // closed and replaced at each export
}

// startCollector serves a collector on a loopback port until t ends.
func startCollector(t *testing.T) *collector {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &collector{addr: ln.Addr().String(), changed: make(chan struct{})}
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, c)
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Stop(); <-done })
	return c
}

// Export implements coltracepb.TraceServiceServer.
func (c *collector) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			c.spans = append(c.spans, ss.GetSpans()...)
		}
	}
	c.exports++
	close(c.changed)
	c.changed = make(chan struct{})
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// waitFor waits until ok holds of the spans received, and returns them;
// it fails t after timeout.
func (c *collector) waitFor(t *testing.T, timeout time.Duration, what string, ok func([]*tracepb.Span) bool) []*tracepb.Span {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		spans, changed := append([]*tracepb.Span(nil), c.spans...), c.changed
		c.mu.Unlock()
		if ok(spans) {
			return spans
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("collector: after %v, no %s among %d spans:\n%s", timeout, what, len(spans), describe(spans))
			return nil
		}
	}
}

// received is how many exports and spans the collector has had.
func (c *collector) received() (exports, spans int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.exports, len(c.spans)
}

// inTrace are the spans of trace id.
func inTrace(spans []*tracepb.Span, id []byte) []*tracepb.Span {
	var out []*tracepb.Span
	for _, s := range spans {
		if string(s.GetTraceId()) == string(id) {
			out = append(out, s)
		}
	}
	return out
}

// named is the first span called name, or nil.
func named(spans []*tracepb.Span, name string) *tracepb.Span {
	for _, s := range spans {
		if s.GetName() == name {
			return s
		}
	}
	return nil
}

// describe lists spans for a failure message.
func describe(spans []*tracepb.Span) string {
	var b []byte
	for i, s := range spans {
		if i == 60 {
			b = append(b, "...\n"...)
			break
		}
		b = append(b, "  "+s.GetName()+" trace="+hex.EncodeToString(s.GetTraceId())+" span="+hex.EncodeToString(s.GetSpanId())+
			" parent="+hex.EncodeToString(s.GetParentSpanId())+"\n"...)
	}
	return string(b)
}
