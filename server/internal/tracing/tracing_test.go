package tracing

import (
	"context"
	"errors"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// TestStartWithoutARecordingSpanIsFree: in a request that is not traced
// (no span, or a no-op one) Start, End and Event do nothing and allocate
// nothing, and Start leaves the context as it was.
func TestStartWithoutARecordingSpanIsFree(t *testing.T) {
	noopCtx, _ := tracenoop.NewTracerProvider().Tracer("t").Start(context.Background(), "request")
	for name, ctx := range map[string]context.Context{"no span": context.Background(), "no-op span": noopCtx} {
		got, span := Start(ctx, "child")
		if got != ctx || span.IsRecording() {
			t.Errorf("%s: Start changed the context or began a recording span", name)
		}
		allocs := testing.AllocsPerRun(100, func() {
			c, span := Start(ctx, "child")
			Event(c, "event")
			End(span, nil)
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per span", name, allocs)
		}
	}
}

// TestStartMakesAChildOfTheRequestSpan: in a traced request, Start's span
// is the request span's child, from the request span's provider; End
// records a failure.
func TestStartMakesAChildOfTheRequestSpan(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ctx, request := tp.Tracer("t").Start(context.Background(), "request")
	ctx, child := Start(ctx, "child")
	Event(ctx, "event")
	End(child, errors.New("boom"))
	request.End()
	spans := rec.Ended()
	if len(spans) != 2 || spans[0].Name() != "child" {
		t.Fatalf("ended spans: %v", spans)
	}
	c := spans[0]
	if c.Parent().SpanID() != request.SpanContext().SpanID() || c.InstrumentationScope().Name != ScopeName {
		t.Errorf("child's parent %v, scope %q", c.Parent().SpanID(), c.InstrumentationScope().Name)
	}
	if c.Status().Description != "boom" || len(c.Events()) != 1 || c.Events()[0].Name != "event" {
		t.Errorf("child's status %v, events %v", c.Status(), c.Events())
	}
	if trace.SpanFromContext(ctx).SpanContext().SpanID() != c.SpanContext().SpanID() {
		t.Error("Start's context does not carry its span")
	}
}
