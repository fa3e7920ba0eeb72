package discovery

import (
	"encoding/json"
	"fmt"
	"net/http"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/apiloom/apiloom/server/resource"
)

// Server answers discovery, OpenAPI and version requests for a fixed set of
// resources. Every field is set by New and never changed, so a Server is
// safe for concurrent use and its handlers do no work beyond choosing a
// document.
type Server struct {
	api, apis [numFormats]*document // /api and /apis, one per discovery format
	groups    map[string]*document  // /apis/{group}, by group
	versions  map[string]*document  // /apis/{group}/{version} by "group/version", /api/{version} by "version"

	openAPIV3Index *document
	openAPIV3      map[string]*document // /openapi/v3/apis/{group}/{version}, by "group/version"
	openAPIV2      *document
	openAPIV2Proto *document

	version *document
}

// Option changes what New renders.
type Option func(*options)

type options struct {
	serverAddress string
}

// WithServerAddress is the server's "host:port", which /api names for
// every client (serverAddressByClientCIDRs, CIDR 0.0.0.0/0), as
// kube-apiserver's does; without it the list is empty.
func WithServerAddress(addr string) Option {
	return func(o *options) { o.serverAddress = addr }
}

// New renders every document for infos. defs is openapi-gen's definitions
// function; it must define each resource's kind (Info.OpenAPIName), its list
// kind (in the same package) and the apimachinery meta types they use.
// serverVersion is what /version reports and versions the OpenAPI documents.
//
// New fails with ErrInvalidResource or ErrMissingDefinition; it keeps no
// reference to infos or defs.
func New(infos []*resource.Info, defs common.GetOpenAPIDefinitions, serverVersion version.Info, opts ...Option) (*Server, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	groups, err := groupInfos(infos)
	if err != nil {
		return nil, err
	}
	if defs == nil {
		return nil, fmt.Errorf("%w: no OpenAPI definitions function", ErrMissingDefinition)
	}
	all := defs(func(string) spec.Ref { return spec.Ref{} })
	for _, g := range groups {
		for _, v := range g.versions {
			if err := checkDefinitions(all, rootKeys(v)); err != nil {
				return nil, err
			}
		}
	}

	s := &Server{
		groups:    map[string]*document{},
		versions:  map[string]*document{},
		openAPIV3: map[string]*document{},
	}
	b := &docBuilder{}
	s.buildDiscovery(b, groups, serverVersion, o)
	if err := s.buildOpenAPI(b, groups, infos, defs, streamParams(all, groups), serverVersion); err != nil {
		return nil, err
	}
	if b.err != nil {
		return nil, b.err
	}
	pb, err := openAPIV2Protobuf(s.openAPIV2.body)
	if err != nil {
		return nil, fmt.Errorf("discovery: encoding OpenAPI v2 as protobuf: %w", err)
	}
	s.openAPIV2Proto = newDocument(pb, contentTypeProtobufV2)
	return s, nil
}

// buildDiscovery renders /api, /apis, /apis/{group}, /apis/{group}/{version}
// and /version.
func (s *Server) buildDiscovery(b *docBuilder, groups []*apiGroup, serverVersion version.Info, o options) {
	// The core group is /api's (and /api/{version}'s), as in
	// kube-apiserver; /apis lists every other group.
	core, named := splitCore(groups)
	var coreGroups []*apiGroup
	if core != nil {
		coreGroups = []*apiGroup{core}
	}
	s.api = [numFormats]*document{
		formatLegacy:            b.json(legacyAPIVersions(core, o.serverAddress), contentTypeJSON),
		formatAggregatedV2:      b.json(aggregatedGroupList(coreGroups, "apidiscovery.k8s.io/v2"), contentTypeAggregatedV2),
		formatAggregatedV2Beta1: b.json(aggregatedGroupList(coreGroups, "apidiscovery.k8s.io/v2beta1"), contentTypeAggregatedV2Beta1),
	}
	s.apis = [numFormats]*document{
		formatLegacy:            b.json(legacyGroupList(named), contentTypeJSON),
		formatAggregatedV2:      b.json(aggregatedGroupList(named, "apidiscovery.k8s.io/v2"), contentTypeAggregatedV2),
		formatAggregatedV2Beta1: b.json(aggregatedGroupList(named, "apidiscovery.k8s.io/v2beta1"), contentTypeAggregatedV2Beta1),
	}
	for _, g := range groups {
		if g.name != "" {
			s.groups[g.name] = b.json(legacyGroup(g), contentTypeJSON)
		}
		for _, v := range g.versions {
			s.versions[v.gv.String()] = b.json(legacyResourceList(v), contentTypeJSON)
		}
	}
	s.version = b.json(serverVersion, contentTypeJSON)
}

// buildOpenAPI renders the OpenAPI v3 document of each group-version, their
// index, and the OpenAPI v2 document.
//
// options are the query parameters of the streams' options (streamParams).
func (s *Server) buildOpenAPI(b *docBuilder, groups []*apiGroup, infos []*resource.Info, defs common.GetOpenAPIDefinitions, options map[string][]queryParam, serverVersion version.Info) error {
	info := &spec.Info{InfoProps: spec.InfoProps{Title: "apiloom", Version: serverVersion.GitVersion}}
	if info.Version == "" {
		info.Version = "unversioned"
	}
	namer := newSchemaNamer(infos)
	index := openAPIV3Index{Paths: map[string]openAPIV3IndexEntry{}}
	for _, g := range groups {
		for _, v := range g.versions {
			doc, err := openAPIV3Doc(v, defs, namer, options, info)
			if err != nil {
				return err
			}
			d := b.json(doc, contentTypeJSON)
			s.openAPIV3[v.gv.String()] = d
			index.Paths[v.path()] = openAPIV3IndexEntry{ServerRelativeURL: openAPIV3URL(v, d.hash)}
		}
	}
	s.openAPIV3Index = b.json(index, contentTypeJSON)

	v2, err := openAPIV2Doc(groups, defs, namer, options, info)
	if err != nil {
		return err
	}
	s.openAPIV2 = b.json(v2, contentTypeJSON)
	return nil
}

// openAPIV2Protobuf converts the JSON OpenAPI v2 document into the
// protobuf encoding client-go's OpenAPISchema asks for.
func openAPIV2Protobuf(body []byte) ([]byte, error) {
	doc, err := openapiv2.ParseDocument(body)
	if err != nil {
		return nil, err
	}
	return proto.Marshal(doc)
}

// docBuilder encodes documents and keeps the first error, so New reads as a
// list of documents rather than a list of error checks. After an error it
// returns empty documents, which New then discards.
type docBuilder struct{ err error }

func (b *docBuilder) json(v any, contentType string) *document {
	if b.err != nil {
		return &document{}
	}
	d, err := newJSONDocument(v, contentType)
	if err != nil {
		b.err = fmt.Errorf("discovery: encoding %T: %w", v, err)
		return &document{}
	}
	return d
}

// Install registers the server's routes on mux. They are GET routes (which
// in Go's ServeMux also answer HEAD) with Go 1.22 patterns; a more specific
// pattern registered by someone else, such as a literal group, wins.
func (s *Server) Install(mux *http.ServeMux) {
	// kube-apiserver answers each discovery path with a trailing slash
	// too (kubectl proxy users and the e2e framework read /api/).
	for _, slash := range []string{"", "/{$}"} {
		mux.HandleFunc("GET /api"+slash, s.serveAPI)
		mux.HandleFunc("GET /api/{version}"+slash, s.serveCoreVersion)
		mux.HandleFunc("GET /apis"+slash, s.serveAPIs)
		mux.HandleFunc("GET /apis/{group}"+slash, s.serveGroup)
		mux.HandleFunc("GET /apis/{group}/{version}"+slash, s.serveGroupVersion)
	}
	mux.HandleFunc("GET /openapi/v3", s.serveOpenAPIV3Index)
	mux.HandleFunc("GET /openapi/v3/apis/{group}/{version}", s.serveOpenAPIV3)
	mux.HandleFunc("GET /openapi/v3/api/{version}", s.serveOpenAPIV3)
	mux.HandleFunc("GET /openapi/v2", s.serveOpenAPIV2)
	mux.HandleFunc("GET /version", s.serveVersion)
}

func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request)  { serveDiscovery(&s.api, w, r) }
func (s *Server) serveAPIs(w http.ResponseWriter, r *http.Request) { serveDiscovery(&s.apis, w, r) }

// serveDiscovery writes the representation of /api or /apis the request
// asks for. The response's Content-Type is what tells client-go which one
// it got.
func serveDiscovery(docs *[numFormats]*document, w http.ResponseWriter, r *http.Request) {
	f, ok := discoveryFormat(r.Header.Get("Accept"))
	if !ok {
		notAcceptable(w, contentTypeAggregatedV2, contentTypeAggregatedV2Beta1, contentTypeJSON)
		return
	}
	docs[f].serve(w, r, revalidate)
}

func (s *Server) serveGroup(w http.ResponseWriter, r *http.Request) {
	serveJSON(w, r, s.groups[r.PathValue("group")], revalidate)
}

func (s *Server) serveGroupVersion(w http.ResponseWriter, r *http.Request) {
	serveJSON(w, r, s.versions[r.PathValue("group")+"/"+r.PathValue("version")], revalidate)
}

// serveCoreVersion serves /api/{version}, the core group's resource list,
// whose groupVersion is the version alone ("v1").
func (s *Server) serveCoreVersion(w http.ResponseWriter, r *http.Request) {
	serveJSON(w, r, s.versions[r.PathValue("version")], revalidate)
}

func (s *Server) serveVersion(w http.ResponseWriter, r *http.Request) {
	serveJSON(w, r, s.version, revalidate)
}

func (s *Server) serveOpenAPIV3Index(w http.ResponseWriter, r *http.Request) {
	serveJSON(w, r, s.openAPIV3Index, revalidate)
}

// serveOpenAPIV3 serves a group-version's document. Like kube-apiserver, a
// request naming the current hash may be cached forever, and one naming an
// old hash is redirected to the current URL.
func (s *Server) serveOpenAPIV3(w http.ResponseWriter, r *http.Request) {
	group, ver := r.PathValue("group"), r.PathValue("version")
	d := s.openAPIV3[schema.GroupVersion{Group: group, Version: ver}.String()]
	hash := r.URL.Query().Get("hash")
	switch {
	case d == nil || hash == "":
		serveJSON(w, r, d, revalidate)
	case hash == d.hash:
		serveJSON(w, r, d, immutable)
	default:
		http.Redirect(w, r, "/openapi/v3"+resource.GroupVersionPath(schema.GroupVersion{Group: group, Version: ver})+"?hash="+d.hash, http.StatusMovedPermanently)
	}
}

func (s *Server) serveOpenAPIV2(w http.ResponseWriter, r *http.Request) {
	protobuf, ok := openAPIV2Format(r.Header.Get("Accept"))
	switch {
	case !ok:
		notAcceptable(w, contentTypeJSON, contentTypeProtobufV2)
	case protobuf:
		s.openAPIV2Proto.serve(w, r, revalidate)
	default:
		s.openAPIV2.serve(w, r, revalidate)
	}
}

// serveJSON writes d, a JSON-only document: 404 if there is none, 406 if
// the client will not take JSON.
func serveJSON(w http.ResponseWriter, r *http.Request, d *document, cache cachePolicy) {
	switch {
	case d == nil:
		writeStatus(w, http.StatusNotFound, metav1.StatusReasonNotFound, "the server could not find the requested resource")
	case !acceptsJSON(r.Header.Get("Accept")):
		notAcceptable(w, contentTypeJSON)
	default:
		d.serve(w, r, cache)
	}
}

func notAcceptable(w http.ResponseWriter, offered ...string) {
	msg := "only the following media types are accepted:"
	for i, t := range offered {
		if i > 0 {
			msg += ","
		}
		msg += " " + t
	}
	writeStatus(w, http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable, msg)
}

// writeStatus writes a failure Status, the body every Kubernetes client
// decodes errors from.
func writeStatus(w http.ResponseWriter, code int32, reason metav1.StatusReason, message string) {
	body, _ := json.Marshal(&metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Message:  message,
		Reason:   reason,
		Code:     code,
	})
	w.Header().Set("Content-Type", contentTypeJSON)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(int(code))
	_, _ = w.Write(body)
}

// OpenAPIV2JSON is the server's OpenAPI v2 document as served, JSON
// encoded. `make generate` feeds it to applyconfiguration-gen, whose type
// converter (used by fake clientsets and Apply) needs every kind's schema.
func (s *Server) OpenAPIV2JSON() []byte { return s.openAPIV2.body }
