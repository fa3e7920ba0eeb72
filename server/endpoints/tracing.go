package endpoints

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/apiloom/apiloom/server/endpoints/negotiation"
	"github.com/apiloom/apiloom/server/internal/tracing"
)

// spanSerialize is kube-apiserver's span around encoding and writing a
// response (responsewriters.SerializeObject): here an object's or a
// list's, whose items are encoded as they are written.
const spanSerialize = "SerializeObject"

// startSerialize begins a traced request's response span.
func startSerialize(ctx context.Context, out negotiation.Output, code int) oteltrace.Span {
	_, span := tracing.Start(ctx, spanSerialize)
	if span.IsRecording() {
		span.SetAttributes(attribute.String("mediaType", out.ContentType()), attribute.Int("code", code),
			attribute.Bool("gzip", out.Gzip))
	}
	return span
}
