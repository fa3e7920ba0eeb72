package apiserver

import (
	"context"
	"net/http"
	"strings"

	"github.com/apiloom/apiloom/server/endpoints"
)

// What the request timeout and the in-flight limits need to know of a
// request, decided as kube-apiserver decides it for a generic apiserver.

// longRunning reports whether r may rightly outlast --request-timeout and
// so holds no in-flight seat: a watch, a kind's own stream subresource
// (marked by withLongRunning), or a pprof profile or trace, which runs
// for its seconds parameter. kube-apiserver's generic check
// (BasicLongRunningRequestCheck with the watch verb, and its
// long-running subresources such as pods/log) says the same.
func longRunning(r *http.Request) bool {
	return endpoints.IsWatch(r) || strings.HasPrefix(r.URL.Path, "/debug/pprof/") || r.Context().Value(longRunningKey{}) != nil
}

// longRunningKey marks a request's context long-running.
type longRunningKey struct{}

// streamChecker is the resource handler's view of the kinds' stream
// subresources, which only it knows (endpoints.NewHandler's IsStream).
type streamChecker interface {
	IsStream(r *http.Request) bool
}

// withLongRunning marks the requests to stream subresources, for the
// filters after it (longRunning, which knows watches itself); outermost,
// before any filter asks.
func withLongRunning(lr streamChecker, next http.Handler) http.Handler {
	if lr == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if lr.IsStream(r) {
			r = r.WithContext(context.WithValue(r.Context(), longRunningKey{}, true))
		}
		next.ServeHTTP(w, r)
	})
}

// isMutating reports whether r counts against
// --max-mutating-requests-inflight: every verb but get, list and watch,
// which are the GETs (and HEADs).
func isMutating(r *http.Request) bool {
	return r.Method != http.MethodGet && r.Method != http.MethodHead
}
