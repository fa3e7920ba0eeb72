package apiserver

import (
	"net/http"
	"strings"

	"github.com/apiloom/apiloom/server/endpoints"
)

// What the request timeout and the in-flight limits need to know of a
// request, decided as kube-apiserver decides it for a generic apiserver.

// longRunning reports whether r may rightly outlast --request-timeout and
// so holds no in-flight seat: a watch, a kind's own stream (withStreams)
// or a pprof profile or trace, which runs for its seconds parameter.
// kube-apiserver's generic check (BasicLongRunningRequestCheck with the
// watch verb, and the log subresource for pods/log) says the same.
func longRunning(r *http.Request) bool {
	return endpoints.IsWatch(r) || isStream(r) || strings.HasPrefix(r.URL.Path, "/debug/pprof/")
}

// isMutating reports whether r counts against
// --max-mutating-requests-inflight: every verb but get, list and watch,
// which are the GETs (and HEADs).
func isMutating(r *http.Request) bool {
	return r.Method != http.MethodGet && r.Method != http.MethodHead
}
