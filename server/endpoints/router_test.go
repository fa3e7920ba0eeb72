package endpoints

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/apiloom/apiloom/server/resource"
)

// routeRecorder is a Resource that records the route it is given.
type routeRecorder struct {
	info  resource.Info
	got   *route
	n     int  // objects stored
	known bool // n is known
}

func (r *routeRecorder) Info() *resource.Info { return &r.info }
func (r *routeRecorder) stored() (int, bool)  { return r.n, r.known }
func (r *routeRecorder) serve(w http.ResponseWriter, _ *http.Request, rt route) {
	*r.got = rt
	w.WriteHeader(http.StatusTeapot)
}

func TestRouter(t *testing.T) {
	var got route
	h := NewHandler(
		&routeRecorder{info: resource.Info{Group: "g.io", Version: "v1", Plural: "dbs", Namespaced: true, HasStatus: true}, got: &got},
		&routeRecorder{info: resource.Info{Group: "g.io", Version: "v1", Plural: "regions"}, got: &got},
		&routeRecorder{info: resource.Info{Group: "g.io", Version: "v1", Plural: "namespaces"}, got: &got},
		// The core group (""), served under /api/v1.
		&routeRecorder{info: resource.Info{Group: "", Version: "v1", Plural: "configmaps", Namespaced: true}, got: &got},
		&routeRecorder{info: resource.Info{Group: "", Version: "v1", Plural: "namespaces", HasStatus: true}, got: &got},
	)
	for _, tc := range []struct {
		path string
		want *route // nil: 404
	}{
		{"/apis/g.io/v1/namespaces/ns/dbs", &route{namespace: "ns"}},
		{"/apis/g.io/v1/namespaces/ns/dbs/x", &route{namespace: "ns", name: "x"}},
		{"/apis/g.io/v1/namespaces/ns/dbs/x/status", &route{namespace: "ns", name: "x", status: true}},
		{"/apis/g.io/v1/dbs", &route{}},
		{"/apis/g.io/v1/regions", &route{}},
		{"/apis/g.io/v1/regions/eu", &route{name: "eu"}},
		// A cluster-scoped resource named "namespaces" keeps its paths.
		{"/apis/g.io/v1/namespaces/ns", &route{name: "ns"}},
		{"/apis/g.io/v1/namespaces", &route{}},
		{"/apis/g.io/v1/dbs/x", nil},
		{"/apis/g.io/v1/namespaces/ns/dbs/x/scale", nil},
		{"/apis/g.io/v1/namespaces/ns/dbs/x/status/more", nil},
		{"/apis/g.io/v1/regions/eu/status", nil},
		{"/apis/g.io/v1/namespaces/ns/regions", nil},
		{"/apis/g.io/v1/widgets", nil},
		{"/apis/g.io/v2/dbs", nil},
		{"/apis/g.io/v1/namespaces//dbs", nil},
		{"/apis/g.io/v1/dbs/", nil},
		{"/apis/g.io/v1", nil},
		{"/api/v1/pods", nil},
		{"/api/v1/namespaces/ns/configmaps", &route{namespace: "ns"}},
		{"/api/v1/namespaces/ns/configmaps/x", &route{namespace: "ns", name: "x"}},
		{"/api/v1/configmaps", &route{}},
		{"/api/v1/namespaces", &route{}},
		{"/api/v1/namespaces/ns", &route{name: "ns"}},
		{"/api/v1/namespaces/ns/status", &route{name: "ns", status: true}},
		{"/api/v1/configmaps/x", nil},
		{"/apis//v1/configmaps", nil},
		{"/apis/v1/configmaps", nil},
		{"/api/v2/configmaps", nil},
		{"/api/v1", nil},
	} {
		got = route{name: "unset"}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", tc.path, nil))
		switch {
		case tc.want == nil && rec.Code != http.StatusNotFound:
			t.Errorf("%s: %d, want 404", tc.path, rec.Code)
		case tc.want != nil && (rec.Code != http.StatusTeapot || got != *tc.want):
			t.Errorf("%s: %d %+v, want %+v", tc.path, rec.Code, got, *tc.want)
		}
	}
}

// TestIsWatch: what the request filters exempt as a watch is exactly what
// dispatch serves as one.
func TestIsWatch(t *testing.T) {
	for _, tc := range []struct {
		method, url string
		want        bool
	}{
		{"GET", "/apis/g/v1/foos?watch=true", true},
		{"GET", "/apis/g/v1/namespaces/ns/foos?watch=1", true},
		{"GET", "/apis/g/v1/namespaces/ns/foos/x?watch=yes", true}, // any value but 0 and false
		{"GET", "/apis/g/v1/foos?watch=", true},
		{"GET", "/apis/g/v1/foos?watch=false", false},
		{"GET", "/apis/g/v1/foos?watch=0", false},
		{"GET", "/apis/g/v1/foos", false},
		{"POST", "/apis/g/v1/foos?watch=true", false},
		{"GET", "/apis/g/v1?watch=true", false}, // discovery
		{"GET", "/api/v1/namespaces/ns/configmaps?watch=true", true},
		{"GET", "/api/v1/configmaps?watch=1", true},
		{"GET", "/api/v1?watch=true", false},
		{"GET", "/openapi/v3?watch=true", false},
	} {
		if got := IsWatch(httptest.NewRequest(tc.method, tc.url, nil)); got != tc.want {
			t.Errorf("%s %s: IsWatch %v, want %v", tc.method, tc.url, got, tc.want)
		}
	}
}

// TestReadSize: a LIST reads what its resource stores, at most its limit;
// a GET, or a LIST that names one object, reads one.
func TestReadSize(t *testing.T) {
	h := NewHandler(
		&routeRecorder{info: resource.Info{Group: "g.io", Version: "v1", Plural: "dbs", Namespaced: true}, n: 2500, known: true},
		&routeRecorder{info: resource.Info{Group: "g.io", Version: "v1", Plural: "regions"}},
	).(interface {
		ReadSize(*http.Request) (int, bool)
	})
	for _, tc := range []struct {
		url   string
		n     int
		known bool
	}{
		{"/apis/g.io/v1/dbs", 2500, true},
		{"/apis/g.io/v1/namespaces/ns/dbs?resourceVersion=0", 2500, true},
		{"/apis/g.io/v1/namespaces/ns/dbs?limit=500", 500, true},
		{"/apis/g.io/v1/namespaces/ns/dbs?limit=5000", 2500, true},
		{"/apis/g.io/v1/namespaces/ns/dbs/x", 1, true},
		{"/apis/g.io/v1/namespaces/ns/dbs?fieldSelector=metadata.name%3Dx", 1, true},
		{"/apis/g.io/v1/regions", 0, false}, // a store that cannot tell
		{"/apis/g.io/v1/regions?limit=500", 500, true},
		{"/apis/g.io/v1", 1, true},
		{"/openapi/v3", 1, true},
	} {
		if n, known := h.ReadSize(httptest.NewRequest("GET", tc.url, nil)); n != tc.n || known != tc.known {
			t.Errorf("%s: %d objects (known %v), want %d (%v)", tc.url, n, known, tc.n, tc.known)
		}
	}
}
