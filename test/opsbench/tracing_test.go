package opsbench

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"

	apiloomserver "github.com/apiloom/apiloom/server/apiserver"
	"github.com/apiloom/apiloom/server/testserver"
)

// Tracing's figures: a configuration file whose sampling rate is 0 (the
// request filter runs, no request is sampled: the cost of having tracing
// configured) and one that samples every request and exports it to a
// collector in this process (the cost of tracing everything).
func init() {
	configurations = append(configurations,
		configuration{name: "tracing-rate-0", options: tracingAt(0)},
		configuration{name: "tracing-rate-1000000", options: tracingAt(1000000)},
	)
}

// tracingAt runs the server with --tracing-config-file sampling rate
// requests per million, exporting to a collector that discards them.
func tracingAt(rate int) func(b *testing.B) []testserver.Option {
	return func(b *testing.B) []testserver.Option {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		srv := grpc.NewServer()
		coltracepb.RegisterTraceServiceServer(srv, discard{})
		done := make(chan struct{})
		go func() { defer close(done); _ = srv.Serve(ln) }()
		b.Cleanup(func() { srv.Stop(); <-done })
		path := filepath.Join(b.TempDir(), "tracing.yaml")
		cfg := fmt.Sprintf("apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nendpoint: %s\nsamplingRatePerMillion: %d\n", ln.Addr(), rate)
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			b.Fatal(err)
		}
		return []testserver.Option{func(o *apiloomserver.Options) { o.TracingConfigFile = path }}
	}
}

// discard is an OTLP trace receiver that drops what it receives.
type discard struct {
	coltracepb.UnimplementedTraceServiceServer
}

func (discard) Export(context.Context, *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	return &coltracepb.ExportTraceServiceResponse{}, nil
}
