package apiserver

import (
	"context"
	"log/slog"

	"k8s.io/apiserver/pkg/audit"
)

// WithAuditIDs makes h add to every record logged with a request's context
// that request's Audit-ID ("auditID"): the one the host's aggregator sent
// with a request it proxied, so that one request is found in the logs of
// both servers, or the one this server made up (filters.WithAuditInit).
func WithAuditIDs(h slog.Handler) slog.Handler { return auditIDs{h} }

type auditIDs struct{ slog.Handler }

func (h auditIDs) Handle(ctx context.Context, r slog.Record) error {
	if id := audit.GetAuditIDTruncated(ctx); id != "" {
		r = r.Clone()
		r.AddAttrs(slog.String("auditID", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h auditIDs) WithAttrs(attrs []slog.Attr) slog.Handler {
	return auditIDs{h.Handler.WithAttrs(attrs)}
}

func (h auditIDs) WithGroup(name string) slog.Handler { return auditIDs{h.Handler.WithGroup(name)} }
