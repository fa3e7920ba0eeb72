package responsewriters

import (
	"context"
	"log/slog"
	"net/http"
)

// StreamFailed records an error found after the response started, when
// the client can no longer be told: a write to a client that went away, or
// an object that did not encode.
func StreamFailed(r *http.Request, what string, err error) {
	LogStreamFailed(r.Context(), r.URL.Path, what, err)
}

// LogStreamFailed is StreamFailed for a response that outlives its
// request's handler (a detached watch), which keeps only its path.
func LogStreamFailed(ctx context.Context, path, what string, err error) {
	slog.DebugContext(ctx, "endpoints: response ended early", "path", path, "during", what, "err", err)
}
