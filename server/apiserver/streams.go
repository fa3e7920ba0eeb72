package apiserver

import (
	"context"
	"net/http"

	"k8s.io/apiserver/pkg/endpoints/request"

	"github.com/apiloom/apiloom/server/resource"
)

// streamKey names one stream subresource of one resource version.
type streamKey struct{ group, version, resource, subresource string }

// longRunningStream is the context key withStreams marks a request with.
type longRunningStream struct{}

// withStreams marks every request to a kind's own stream subresource
// (resource.Stream, "databases/logs") as long-running, as kube-apiserver's
// long-running check marks pods/log: the stream lasts as long as its
// handler likes, so no request timeout cuts it, it holds no in-flight seat
// and no APF seat past its start, and its audit events have a
// ResponseStarted stage. It reads the request info, so it runs inside
// withRequestInfo; longRunning reads the mark.
func withStreams(infos []*resource.Info, next http.Handler) http.Handler {
	streams := map[streamKey]bool{}
	for _, info := range infos {
		for _, sub := range info.Subresources {
			if sub.Type == resource.Stream {
				streams[streamKey{info.Group, info.Version, info.Plural, sub.Name}] = true
			}
		}
	}
	if len(streams) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ri, ok := request.RequestInfoFrom(r.Context())
		if ok && ri.IsResourceRequest && ri.Subresource != "" && r.Method == http.MethodGet &&
			streams[streamKey{ri.APIGroup, ri.APIVersion, ri.Resource, ri.Subresource}] {
			r = r.WithContext(context.WithValue(r.Context(), longRunningStream{}, true))
		}
		next.ServeHTTP(w, r)
	})
}

// isStream reports whether withStreams marked r.
func isStream(r *http.Request) bool {
	marked, _ := r.Context().Value(longRunningStream{}).(bool)
	return marked
}
