package cache

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/apiloom/apiloom/server/internal/tracing"
	"github.com/apiloom/apiloom/server/storage"
)

// The spans of a traced request's reads, by the names kube-apiserver's
// watch cache (the cacher) gives them. A read the cache passes to etcd
// has the event eventFromSource, and etcd's calls as children; one it
// answers from memory has neither.
const (
	spanGet         = "cacher.Get"
	spanGetList     = "cacher.GetList"
	eventFromSource = "delegated to storage"
)

// startSpan begins a read's span, with what it reads (what named where).
func (c *Cache[O]) startSpan(ctx context.Context, name, what, where, rv string) (context.Context, trace.Span) {
	ctx, span := tracing.Start(ctx, name)
	if span.IsRecording() {
		span.SetAttributes(attribute.String("resource", c.def.GroupResource().String()),
			attribute.String(what, where), attribute.String("resourceVersion", rv))
	}
	return ctx, span
}

// listFromSource passes a list to the source, etcd's store.
func (c *Cache[O]) listFromSource(ctx context.Context, opts storage.ListOptions) (*storage.List[O], error) {
	tracing.Event(ctx, eventFromSource)
	return c.src.GetList(ctx, opts)
}
