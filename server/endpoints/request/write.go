package request

import (
	"context"
	"net/http"

	"k8s.io/apiserver/pkg/warning"

	"github.com/apiloom/apiloom/server/endpoints/responsewriters"
)

// Write is what a write's admission (the chain, the kind's hooks) knows of
// its request beyond the object, and where its warnings go: carried in the
// context of every write (WithWrite), as k8s.io/apiserver's warning
// recorder too (warning.AddWarning).
type Write struct {
	w http.ResponseWriter
	// Subresource is "" for the main resource, else "status", "scale" or
	// "finalize".
	Subresource string
	DryRun      bool
	// warned are the warnings already added to w's header.
	warned map[string]bool
}

var _ warning.Recorder = (*Write)(nil)

type writeKey struct{}

// WithWrite is r, a write to subresource answered through w, with its
// Write in its context. dryRun is the query's; a DELETE's body may set it
// (SetDryRun).
func WithWrite(r *http.Request, w http.ResponseWriter, subresource string) *http.Request {
	a := &Write{w: w, Subresource: subresource, DryRun: len(r.URL.Query()["dryRun"]) > 0}
	ctx := context.WithValue(r.Context(), writeKey{}, a)
	return r.WithContext(warning.WithWarningRecorder(ctx, a))
}

// WriteOf is ctx's Write; outside a write, an empty one shared by all,
// which adds no warning (it has no response) and must not be changed.
func WriteOf(ctx context.Context) *Write {
	if a, ok := ctx.Value(writeKey{}).(*Write); ok {
		return a
	}
	return &noWrite
}

// noWrite is the Write outside a write.
var noWrite Write

// SetDryRun records dryRun from DeleteOptions, which may come in a body.
func SetDryRun(ctx context.Context, dryRun bool) {
	if a, ok := ctx.Value(writeKey{}).(*Write); ok {
		a.DryRun = dryRun
	}
}

// AddWarning implements warning.Recorder: the warning is added to the
// response's Warning headers, once; nothing outside a write.
func (a *Write) AddWarning(_, text string) {
	if a.w == nil || a.warned[text] {
		return
	}
	if a.warned == nil {
		a.warned = map[string]bool{}
	}
	a.warned[text] = true
	responsewriters.WriteWarnings(a.w, []string{text})
}
