package endpoints

import (
	"context"
	"net/http"
	"time"

	"k8s.io/apiserver/pkg/warning"

	"github.com/apiloom/apiloom/server/endpoints/responsewriters"
	"github.com/apiloom/apiloom/server/endpoints/strategy"
	"github.com/apiloom/apiloom/server/hook"
)

// A kind's hooks (resource.Definition.Hooks, package server/hook) are
// stages of the admission chain (admit.go, stages.go), so no write path
// calls them itself: the mutating hooks (Default, then PrepareFor*) are
// the chain's KindMutatingHooks, the validating ones its
// KindValidatingHooks, once the metadata rules, the schema and its CEL
// rules accepted the object; a delete's (delete and each item of a
// deletecollection) runs ValidateDelete on the stored object. What each
// call may not know from its arguments (the subresource, dryRun, where
// warnings go) the request carries in its context (withAdmission).

// WithHooks gives the resource's hooks read access to every served kind
// through readers and bounds each point of a request's hooks by timeout
// (hook.DefaultTimeout when not positive).
func WithHooks(readers hook.Readers, timeout time.Duration) Option {
	return func(c *handlerConfig) { c.hooks = strategy.Hooks{Readers: readers, Timeout: timeout} }
}

// writeRequest is what a write's admission (the chain, the kind's
// hooks) knows of it beyond the object, and where its warnings go: set in
// the context of every write by serve, as k8s.io/apiserver's warning
// recorder too (warning.AddWarning).
type writeRequest struct {
	w           http.ResponseWriter
	subresource string
	dryRun      bool
	// warned are the warnings already added to w's header.
	warned map[string]bool
}

var _ warning.Recorder = (*writeRequest)(nil)

type writeRequestKey struct{}

// withAdmission is r's context with its writeRequest, for a write (reads
// have no admission, and do without the allocations).
func (h *handler[O]) withAdmission(w http.ResponseWriter, r *http.Request, rt route) *http.Request {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return r
	}
	a := &writeRequest{w: w, dryRun: len(r.URL.Query()["dryRun"]) > 0}
	switch {
	case rt.status:
		a.subresource = "status"
	case rt.scale:
		a.subresource = "scale"
	case rt.finalize:
		a.subresource = "finalize"
	}
	ctx := context.WithValue(r.Context(), writeRequestKey{}, a)
	return r.WithContext(warning.WithWarningRecorder(ctx, a))
}

// requestOf is ctx's writeRequest; an empty one outside a write.
func requestOf(ctx context.Context) *writeRequest {
	if a, ok := ctx.Value(writeRequestKey{}).(*writeRequest); ok {
		return a
	}
	return &writeRequest{}
}

// setDryRun records dryRun from DeleteOptions, which may come in a body.
func setDryRun(ctx context.Context, dryRun bool) {
	if a, ok := ctx.Value(writeRequestKey{}).(*writeRequest); ok {
		a.dryRun = dryRun
	}
}

// AddWarning implements warning.Recorder: the warning is added to the
// response's Warning headers, once.
func (a *writeRequest) AddWarning(_, text string) { a.warn([]string{text}) }

// warn adds warnings to the response's Warning headers, once each;
// nothing outside a write.
func (a *writeRequest) warn(warnings hook.Warnings) {
	if a.w == nil {
		return
	}
	for _, msg := range warnings {
		if a.warned[msg] {
			continue
		}
		if a.warned == nil {
			a.warned = map[string]bool{}
		}
		a.warned[msg] = true
		responsewriters.WriteWarnings(a.w, []string{msg})
	}
}
