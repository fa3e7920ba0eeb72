package apiserver

import (
	"context"
	"net/http"
	"os"
	"time"

	"go.opentelemetry.io/otel/trace"
	"k8s.io/apiserver/pkg/endpoints/filters"

	"github.com/apiloom/apiloom/server/etcdclient"
	"github.com/apiloom/apiloom/server/internal/tracing"
)

// tracingFlushTimeout bounds how long shutdown waits for the spans still
// batched to reach the collector: a collector that is down must not hold
// the process, whose requests are already drained.
const tracingFlushTimeout = 5 * time.Second

// startTracing creates the tracer provider --tracing-config-file
// configures, or returns a nil provider without one: then no filter is
// installed and no span is started anywhere. stop flushes the batched
// spans and stops the exporter; Run calls it last, after etcd's client,
// whose spans it thus exports too.
func (s *Server) startTracing(ctx context.Context) (tp trace.TracerProvider, stop func(), err error) {
	if s.opts.TracingConfigFile == "" {
		return nil, func() {}, nil
	}
	cfg, err := tracing.Load(s.opts.TracingConfigFile)
	if err != nil {
		return nil, nil, err
	}
	host, _ := os.Hostname()
	// The exporter outlives ctx: it flushes after ctx has ended.
	provider, err := tracing.NewProvider(context.WithoutCancel(ctx), cfg, "apiloom-"+host)
	if err != nil {
		return nil, nil, err
	}
	stop = func() {
		flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tracingFlushTimeout)
		defer cancel()
		if err := provider.Shutdown(flushCtx); err != nil {
			s.log.Warn("tracing: spans not all exported at shutdown", "err", err)
		}
	}
	return provider, stop, nil
}

// withTracing is kube-apiserver's request span (filters.WithTracing):
// the W3C traceparent a request carries makes it the child of the
// client's span when the client is in system:masters or
// system:monitoring, and a new trace linked to it otherwise. Without a
// provider it is next itself.
func withTracing(tp trace.TracerProvider, next http.Handler) http.Handler {
	if tp == nil {
		return next
	}
	return filters.WithTracing(next, tp)
}

// withEtcdTracing is cfg with the etcd client traced by tp (nil: not).
func withEtcdTracing(cfg etcdclient.Config, tp trace.TracerProvider) etcdclient.Config {
	cfg.TracerProvider = tp
	return cfg
}
