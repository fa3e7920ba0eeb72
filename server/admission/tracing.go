package admission

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"k8s.io/apiserver/pkg/admission"

	"github.com/apiloom/apiloom/server/internal/tracing"
)

// The spans of the two phases, in a traced request. kube-apiserver has
// none of its own around admission (its webhooks' calls are spans,
// "Call mutating webhook" and "Call validating webhook", and are here
// too, as children of these).
const (
	spanAdmit    = "Admission mutating"
	spanValidate = "Admission validating"
)

// startPhase begins a phase's span, with the write it admits.
func startPhase(ctx context.Context, name string, a admission.Attributes) (context.Context, trace.Span) {
	ctx, span := tracing.Start(ctx, name)
	if span.IsRecording() {
		span.SetAttributes(attribute.String("operation", string(a.GetOperation())),
			attribute.String("resource", a.GetResource().GroupResource().String()),
			attribute.String("subresource", a.GetSubresource()),
			attribute.String("namespace", a.GetNamespace()), attribute.String("name", a.GetName()),
			attribute.Bool("dryRun", a.IsDryRun()))
	}
	return ctx, span
}
