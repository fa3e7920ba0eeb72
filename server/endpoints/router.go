package endpoints

import (
	"net/http"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiloom/apiloom/server/endpoints/request"
	"github.com/apiloom/apiloom/server/endpoints/responsewriters"
	"github.com/apiloom/apiloom/server/resource"
)

// Resource is one resource's REST handler, built by NewResource and routed
// to by NewHandler. Only this package implements it.
type Resource interface {
	// Info describes the resource.
	Info() *resource.Info
	// serve handles one request already routed to the resource.
	serve(w http.ResponseWriter, r *http.Request, rt route)
	// stored is how many objects the resource's store holds, when it
	// can tell without a read (the watch cache can).
	stored() (n int, ok bool)
}

// route is what the URL path says about a request beyond its resource.
type route struct {
	// namespace is the {ns} of a .../namespaces/{ns}/... path; "" on
	// cluster-scoped paths and on the all-namespaces collection.
	namespace string
	// name is the object's name; "" for the collection.
	name string
	// status is true for the .../{name}/status subresource.
	status bool
	// scale is true for the .../{name}/scale subresource.
	scale bool
	// finalize is true for the .../{name}/finalize subresource.
	finalize bool
	// custom is the name of one of the kind's own subresources
	// (resource.Definition.Custom) the path names; "" for none.
	custom string
}

// NewHandler returns the handler for every resource path under /apis, and
// under /api/v1 for the core group (""), as kube-apiserver serves it:
//
//	/apis/{g}/{v}/{plural}[/{name}[/status|/scale]]                  cluster-scoped
//	/apis/{g}/{v}/namespaces/{ns}/{plural}[/{name}[/status|/scale]]  namespaced
//	/apis/{g}/{v}/{plural}                                    namespaced, all namespaces
//	/api/{v}/...                                              the same, core group
//
// and .../{name}/{sub} for a kind's own subresources (custom.go). Paths
// that name no served resource get a 404 Status. Discovery serves
// /api, /api/{v}, /apis, /apis/{g} and /apis/{g}/{v} itself; the caller
// mounts this handler for the deeper paths and wraps it with
// authentication.
func NewHandler(resources ...Resource) http.Handler {
	rt := &router{byPath: make(map[string]Resource, len(resources)), byGroupResource: make(map[string]Resource, len(resources)), streams: map[string]bool{}}
	for _, res := range resources {
		i := res.Info()
		rt.byPath[i.Group+"/"+i.Version+"/"+i.Plural] = res
		rt.byGroupResource[schema.GroupResource{Group: i.Group, Resource: i.Plural}.String()] = res
		for _, s := range i.Subresources {
			if s.Type == resource.Stream {
				rt.streams[s.Name] = true
			}
		}
	}
	return rt
}

// router finds the resource a path names. Immutable after NewHandler.
type router struct {
	byPath          map[string]Resource // "group/version/plural"
	byGroupResource map[string]Resource // "plural.group", any version's
	// streams are the names of every kind's own stream subresources: a
	// GET whose last segment is none of them is no stream, known without
	// matching its path.
	streams map[string]bool
}

// ObjectCount is how many objects the resource groupResource
// ("plural.group", GroupResource.String) holds, when its store can tell
// without a read; API Priority and Fairness weighs a LIST by it.
func (rt *router) ObjectCount(groupResource string) (n int, ok bool) {
	res, found := rt.byGroupResource[groupResource]
	if !found {
		return 0, false
	}
	return res.stored()
}

func (rt *router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	res, route, ok := rt.match(r.URL.Path)
	if !ok {
		responsewriters.WriteError(w, r, errPathNotFound)
		return
	}
	res.serve(w, r, route)
}

// match splits path into its resource and route. ok is false when the path
// names no served resource or has a shape the resource does not serve.
func (rt *router) match(path string) (res Resource, rte route, ok bool) {
	group, rest, found := groupVersionPath(path)
	if !found {
		return nil, route{}, false
	}
	segs := strings.Split(rest, "/")
	if len(segs) < 2 || len(segs) > 6 {
		return nil, route{}, false
	}
	for _, s := range segs {
		if s == "" {
			return nil, route{}, false
		}
	}
	gv, segs := group+"/"+segs[0]+"/", segs[1:]

	// namespaces/{ns}/{plural}[/{name}[/status]] for a namespaced resource.
	if segs[0] == "namespaces" && len(segs) >= 3 {
		if res := rt.byPath[gv+segs[2]]; res != nil && res.Info().Namespaced {
			rte.namespace = segs[1]
			return objectRoute(res, rte, segs[3:])
		}
	}
	res = rt.byPath[gv+segs[0]]
	if res == nil {
		return nil, route{}, false
	}
	if res.Info().Namespaced && len(segs) > 1 {
		// Namespaced objects are only addressed within their namespace.
		return nil, route{}, false
	}
	return objectRoute(res, rte, segs[1:])
}

// objectRoute completes rte from the segments after the plural:
// nothing, {name}, {name}/status or {name}/scale.
func objectRoute(res Resource, rte route, segs []string) (Resource, route, bool) {
	switch len(segs) {
	case 0:
	case 1:
		rte.name = segs[0]
	case 2:
		switch {
		case segs[1] == "status" && res.Info().HasStatus:
			rte.status = true
		case segs[1] == "scale" && res.Info().Scale != nil:
			rte.scale = true
		case segs[1] == "finalize" && res.Info().HasFinalize:
			rte.finalize = true
		case customType(res.Info(), segs[1]) != "":
			rte.custom = segs[1]
		default:
			return nil, route{}, false
		}
		rte.name = segs[0]
	default:
		return nil, route{}, false
	}
	return res, rte, true
}

// IsWatch reports whether the handler serves r as a watch: a GET of a
// resource path (of a collection or, as apiloom also serves it, of one
// object) whose watch parameter is true by kube-apiserver's reading (any
// value but "0" and "false"). A watch may run for an hour, so filters in
// front of the handler exempt it from the request timeout and the
// in-flight limits, as kube-apiserver exempts its long-running requests.
func IsWatch(r *http.Request) bool {
	if r.Method != http.MethodGet || !request.QueryBool(r.URL.Query(), "watch") {
		return false
	}
	_, rest, ok := groupVersionPath(r.URL.Path)
	return ok && strings.Count(strings.Trim(rest, "/"), "/") >= 1 // version/plural...
}

// customType is the type of info's own subresource name; "" when it has
// none of that name.
func customType(info *resource.Info, name string) resource.SubresourceType {
	for _, s := range info.Subresources {
		if s.Name == name {
			return s.Type
		}
	}
	return ""
}

// IsLongRunning reports whether the handler serves r as a long-running
// request: a watch (IsWatch), or a GET of one of a kind's own stream
// subresources (as pods/log with follow, it lasts as long as its handler
// writes). Filters in front of the handler exempt such requests from the
// request timeout and the in-flight limits, as kube-apiserver exempts
// its long-running requests.
func (rt *router) IsLongRunning(r *http.Request) bool {
	return rt.IsStream(r) || IsWatch(r)
}

// IsStream reports whether r is a GET of one of a kind's own stream
// subresources. It runs in front of every request (the long-running
// filter), so a request whose last path segment names no stream
// subresource is answered without parsing its path or query.
func (rt *router) IsStream(r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	p := r.URL.Path
	if !rt.streams[p[strings.LastIndexByte(p, '/')+1:]] {
		return false
	}
	res, route, ok := rt.match(p)
	return ok && route.custom != "" && customType(res.Info(), route.custom) == resource.Stream
}

// groupVersionPath splits a resource path into its group and the rest from
// the version on ("{v}/..."): /apis/{g}/{v}/... is group g, /api/{v}/... the
// core group (""). ok is false for paths under neither, or with an empty
// group.
func groupVersionPath(path string) (group, rest string, ok bool) {
	if rest, ok := strings.CutPrefix(path, "/apis/"); ok {
		group, rest, ok = strings.Cut(rest, "/")
		return group, rest, ok && group != ""
	}
	if rest, ok := strings.CutPrefix(path, "/api/"); ok {
		return "", rest, true
	}
	return "", "", false
}

// ReadSize is how many objects r, a read-only request, reads: for a LIST,
// as many as its resource stores, or its limit if smaller; one for a GET,
// and for a LIST that names its one object by a metadata.name field
// selector. ok is false for a LIST whose store cannot tell how many it
// holds (without the watch cache) and that has no limit. Reads other than
// of a resource count as one. The in-flight limits weigh a request by it,
// as kube-apiserver's API Priority and Fairness weighs its LISTs.
func (rt *router) ReadSize(r *http.Request) (objects int, ok bool) {
	res, route, found := rt.match(r.URL.Path)
	if !found || route.name != "" {
		return 1, true
	}
	q := r.URL.Query()
	if fs, err := fields.ParseSelector(q.Get("fieldSelector")); err == nil {
		if _, single := fs.RequiresExactMatch("metadata.name"); single {
			return 1, true
		}
	}
	limit, _ := strconv.Atoi(q.Get("limit"))
	n, known := res.stored()
	switch {
	case known && limit > 0:
		return min(n, limit), true
	case known:
		return n, true
	case limit > 0:
		return limit, true
	}
	return 0, false
}

// errPathNotFound is the 404 for a path that names no served resource.
var errPathNotFound = &apierrors.StatusError{ErrStatus: metav1.Status{
	Status:  metav1.StatusFailure,
	Code:    http.StatusNotFound,
	Reason:  metav1.StatusReasonNotFound,
	Message: "the server could not find the requested resource",
	Details: &metav1.StatusDetails{},
}}
