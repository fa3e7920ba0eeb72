// Package tracing is the server's OpenTelemetry tracing, configured as
// kube-apiserver's is (--tracing-config-file, an apiserver.config.k8s.io
// TracingConfiguration): the provider that exports spans over OTLP/gRPC,
// and Start, with which the layers a request crosses (admission, the watch
// cache, the response) add their spans to the request's.
//
// Spans hang off the request's context: the request filter
// (k8s.io/apiserver's filters.WithTracing) puts the server's root span
// there, and every other span is its descendant. Without a recording span
// in the context Start does nothing and allocates nothing, so a server
// without --tracing-config-file (which installs no filter at all) pays a
// context lookup per span site.
package tracing

import (
	"context"
	"fmt"
	"os"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	basetracing "k8s.io/component-base/tracing"
	tracingapi "k8s.io/component-base/tracing/api/v1"
)

// ScopeName is the instrumentation scope of apiloom's own spans.
const ScopeName = "github.com/apiloom/apiloom/server"

// ServiceName is the service.name the spans are exported under:
// kube-apiserver's, so that queries and dashboards written for it find
// apiloom's spans too.
const ServiceName = "apiserver"

// Load reads and validates the TracingConfiguration in path (JSON or
// YAML, apiserver.config.k8s.io/v1, v1beta1 or v1alpha1, decoded strictly
// as kube-apiserver does), naming the file in its errors.
func Load(path string) (*tracingapi.TracingConfiguration, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("--tracing-config-file: %w", err) // the error names the file
	}
	cfg, err := genericoptions.ReadTracingConfiguration(path)
	if err != nil {
		return nil, fmt.Errorf("--tracing-config-file %s: %w", path, err)
	}
	if errs := tracingapi.ValidateTracingConfiguration(cfg, utilfeature.DefaultFeatureGate, field.NewPath("tracing")); len(errs) > 0 {
		return nil, fmt.Errorf("--tracing-config-file %s: %w", path, errs.ToAggregate())
	}
	return cfg, nil
}

// NewProvider is kube-apiserver's tracer provider for cfg
// (component-base's tracing.NewProvider): spans are sampled
// parent-based, at cfg's rate per million for requests that come without
// a sampled parent; batched; exported over OTLP/gRPC, insecure, to cfg's
// endpoint (localhost:4317 by default). Nothing is dialled until the first
// batch leaves. instance is the service.instance.id the spans carry.
func NewProvider(ctx context.Context, cfg *tracingapi.TracingConfiguration, instance string) (basetracing.TracerProvider, error) {
	return basetracing.NewProvider(ctx, cfg, nil, []resource.Option{resource.WithAttributes(
		attribute.String("service.name", ServiceName),
		attribute.String("service.instance.id", instance),
	)})
}

// Start begins a span named name as a child of ctx's span, and returns
// the context that carries it. If ctx's span is not recording (tracing is
// off, or this request is not sampled) it returns ctx unchanged and a
// no-op span, without allocating: callers set attributes only when
// span.IsRecording().
func Start(ctx context.Context, name string) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx, noop.Span{}
	}
	return parent.TracerProvider().Tracer(ScopeName).Start(ctx, name)
}

// End ends span, marking it failed with err's message if err is not nil.
func End(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// Event adds an event named name to ctx's span, if it is recording.
func Event(ctx context.Context, name string) {
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent(name)
	}
}
